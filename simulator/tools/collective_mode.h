// hvdsim --collective: a size sweep of one collective, in nccl-tests' columns, with the
// collective as the backend runs it (raw: NCCL as hvd/sim/nccl_model.h times it) beside
// the full hvd API over the simulated cluster (negotiation, cycle, fusion).
#pragma once

#include <cstdint>
#include <string>

#include "hvd/sim/scenario.h"

namespace hvd::sim {

/// What the command line says of the sweep.
struct CollectiveArgs {
  std::string collective;  ///< allreduce, allgather, reducescatter, broadcast, alltoall
  std::string min_b = "8", max_b = "64MiB";
  int64_t factor = 8;
  int np = 0;              ///< 0: the largest of sweep.np
  int iters = 20, warmup = 5;
  bool raw_only = false;   ///< no runtime simulation: the raw column alone
  int gpus_per_thread = 1; ///< nccl-tests -g: GPUs one host thread drives (raw column)
  std::string datatype = "float";  ///< nccl-tests -d: int8, uint8, int32, int64, half, bfloat16, float, double
  std::string op = "sum";          ///< nccl-tests -o: sum, prod, min, max, avg
  bool op_given = false;           ///< -o on the command line (refused for a collective that does not reduce)
  std::string report_path; ///< JSON report (and CSV beside it); "" for none
};

/// Runs the sweep; prints the table; writes the report. Returns the exit code.
int run_collective(const Scenario& sc, const CollectiveArgs& a);

}  // namespace hvd::sim
