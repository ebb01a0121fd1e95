// The world an hvdbench mode runs in: this rank of an MPI job, or one process alone. The one
// place of hvdbench's modes that knows MPI (model, collective and calibrate mode use it; the
// runtime's own world is RankRuntime's). Every helper works with one rank and without MPI,
// so a mode reads the same whether or not this hvdbench was built with MPI.
#pragma once

#include <cstdint>
#include <string>

#include "hvd/status.h"

namespace hvd::bench {

struct BenchWorld {
  bool mpi = false;  ///< MPI started (by start()); false: one process alone
  int rank = 0;
  int size = 1;

  /// True when this hvdbench was built with MPI.
  static bool built_with_mpi();

  /// With `mpi`, starts MPI (init_mpi) and learns rank and size; without, one rank alone.
  /// kPrecondition "hvdbench was built without MPI" when asked for MPI in a build without.
  Status start(bool with_mpi);
  /// Finalizes MPI when start() started it.
  void finalize() const;
  /// Writes "hvdbench: <line>" to stderr, then, never leaving peers waiting, aborts the job
  /// when it has more than one rank or finalizes MPI; returns kExitRuntimeFailure.
  int fail(const std::string& line) const;

  // ---- across ranks (with one rank: the value itself) -----------------------------------
  void barrier() const;
  double max_of(double v) const;
  double sum_of(double v) const;
  int64_t sum_of(int64_t v) const;
  /// The mean over the ranks whose v >= 0; -1 when none has one.
  double mean_of_valid(double v) const;
  /// Rank 0's v on every rank; with `idle`, the others wait without spinning (rank 0 may be
  /// busy measuring on the cores they share).
  double from_rank0(double v, bool idle = false) const;
  /// The lowest rank where `ok` is false, or -1 when it holds on every rank.
  int first_failing(bool ok) const;
};

}  // namespace hvd::bench
