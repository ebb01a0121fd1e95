// Sweeps beyond one machine (docs/simulator.md, "Sweeps over a cluster"). The runs of a
// sweep (runner.h's sweep_jobs) are independent, so they can be spread:
//   - over the ranks of an MPI launch: `mpirun -np K hvdsim ...` or `srun hvdsim ...`; each
//     rank forks its own children for its share, rank 0 gathers the outcomes and writes the
//     report a single run writes, byte for byte;
//   - over separate invocations: `hvdsim ... --shard i/N --report part_i.json` (e.g. one per
//     Slurm array task) writes a partial report; `hvdsim --merge part_*.json --report out.json`
//     joins them into the single run's report.
// Which job goes where is a pure function of the job list (assign_jobs), never of timing.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "hvd/report/report.h"
#include "hvd/sim/runner.h"
#include "hvd/sim/scenario.h"
#include "hvd/status.h"

namespace hvd::sim {

/// Estimated cost of a job: np · bit_width(np) (a run costs a little more than linear in np).
int64_t job_cost(const SweepJob& job);

/// Deterministic assignment of `jobs` to `bins` (>= 1) bins: the costliest first (ties: the
/// lower index) to the least-loaded bin so far (ties: the lower bin). result[j] = j's bin.
std::vector<int> assign_jobs(const std::vector<SweepJob>& jobs, int bins);

/// Parses --shard "i/N" (0-based i, 0 <= i < N <= 100000); one-line error otherwise.
Status parse_shard(const std::string& text, int* index, int* count);

/// What identifies a sweep for --merge: a digest of the scenario file's bytes, the --set
/// overrides, --with-data and the job list (16 hex digits).
std::string sweep_digest(const std::string& scenario_path, const std::vector<std::string>& overrides,
                         bool with_data, const std::vector<SweepJob>& jobs);

/// How this hvdsim process takes part in a sweep: alone, as one rank of an MPI launch
/// (detected from OMPI_COMM_WORLD_SIZE, PMI_SIZE or srun's SLURM_STEP_NUM_TASKS), and/or
/// as one --shard. Build one at the top of main(), before anything is forked or printed,
/// and end main with `return spread.finish(code)`.
class Spread {
 public:
  /// Under an MPI launch of more than one rank (rank and size from the environment; MPI
  /// itself is initialised only after this rank's simulations, see run()), on ranks other
  /// than 0 stdout goes to /dev/null and std::cerr is held back (rank 0 prints the one line
  /// of an error).
  Spread();
  ~Spread();
  Spread(const Spread&) = delete;
  Spread& operator=(const Spread&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Prints the table and writes the report: rank 0 (or the only process).
  bool is_root() const { return rank_ == 0; }

  /// --shard i/N: only this shard's jobs (checked by parse_shard).
  Status set_shard(const std::string& text);
  bool sharded() const { return shard_count_ > 0; }

  /// run_scenario, spread: this process simulates its share of the sweep (of the shard)
  /// and rank 0 gathers every outcome. Rank 0 gets the records (all ranks get the same
  /// status: the first failing job in sweep order, as a single run reports it).
  Status run(const Scenario& sc, const RunOptions& opts, std::vector<report::RunRecord>* records);

  /// --shard: writes the partial report (rank 0) to `path`: the digest, i/N, the outcome
  /// of each of the shard's jobs, and what --merge needs to write the full report.
  Status write_shard(const std::string& path, const std::string& scenario_path,
                     const std::vector<std::string>& overrides, bool with_data) const;

  /// The process's exit code, agreed between the ranks: a failure on any rank makes every
  /// rank exit non-zero, and rank 0 prints the failing rank's line when it has not failed
  /// itself. Finalizes MPI.
  int finish(int code);

 private:
  Status init_mpi();
  Status agree(const Status& mine);
  Status gather(const std::vector<size_t>& mine, const std::vector<std::string>& results, Status local,
                size_t local_failed, std::vector<std::string>* all);

  int rank_ = 0, size_ = 1;
  bool launched_ = false;     // started by mpirun/srun as one of several ranks
  bool mpi_ = false;          // MPI_Init was called here
  bool agreed_ = false;       // the ranks have already agreed on a failure
  Status launch_error_;       // launched as several ranks but MPI cannot spread them
  int shard_index_ = 0, shard_count_ = 0;
  std::ostringstream held_;   // ranks other than 0: std::cerr
  std::streambuf* cerr_ = nullptr;
  // After run(): what write_shard needs.
  const Scenario* sc_ = nullptr;
  std::vector<SweepJob> jobs_;
  std::vector<size_t> shard_jobs_;
  std::vector<std::string> results_;
};

/// The full report from --shard partial reports.
struct MergedSweep {
  std::string source;                        ///< the scenario path the shards name
  Scenario scenario;                         ///< its points' labels and what-ifs only
  std::vector<report::RunRecord> records;    ///< as run_scenario returns them
};

/// --merge: checks the partial reports are all the shards of one sweep (same digest and N,
/// each shard once, every job exactly once) and rebuilds the single run's records.
Status merge_shards(const std::vector<std::string>& paths, MergedSweep* out);

}  // namespace hvd::sim
