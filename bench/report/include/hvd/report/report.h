// The report written by hvdbench and hvdsim (docs/formats.md): one record per run, as
// JSON and CSV, with bandwidths as nccl-tests defines them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hvd/runtime.h"
#include "hvd/status.h"
#include "hvd/types.h"

namespace hvd::report {

/// Traffic of one collective kind in a run.
struct CollectiveRecord {
  std::string op;        ///< "allreduce", "allgather", ...
  int64_t calls = 0;     ///< operations
  int64_t bytes = 0;     ///< payload bytes (per rank)
  double time_s = 0;     ///< time spent executing them
  double algbw_gbps = 0; ///< bytes / time, GB/s
  double busbw_gbps = 0; ///< algbw × the nccl-tests factor
};

/// One run (one model at one np, or one sweep point).
struct RunRecord {
  std::string model;                        ///< model name
  int np = 0;                               ///< ranks
  int batch_size = 0;                       ///< per-rank batch
  std::string gpu;                          ///< GPU model
  std::string label;                        ///< sweep point, "" otherwise
  double images_per_sec = 0;                ///< whole job
  double images_per_sec_ci95 = 0;           ///< half-width of the 95 % interval
  double images_per_sec_single = 0;         ///< one rank alone
  double scaling_efficiency = 0;            ///< images_per_sec / (np × single)
  double step_time_s = 0;                   ///< mean step
  double compute_s = 0;                     ///< compute part
  double exposed_comm_s = 0;                ///< communication not hidden
  double negotiation_s = 0;                 ///< part of exposed spent negotiating
  int steps = 0;                            ///< measured steps
  std::map<std::string, std::string> knobs; ///< effective knobs worth showing
  std::vector<CollectiveRecord> collectives;///< per collective kind
};

/// nccl-tests bus-bandwidth factor for `op` at `n` ranks.
double busbw_factor(const std::string& op, int n);
/// Fills algbw/busbw from bytes and time.
void fill_bandwidth(CollectiveRecord* c, int n);
/// Writes `{"tool", "version", "source", "runs": [...]}` to `path`.
Status write_json(const std::string& path, const std::string& tool, const std::string& source,
                  const std::vector<RunRecord>& runs);
/// Writes the CSV (one line per run) to `path`.
Status write_csv(const std::string& path, const std::vector<RunRecord>& runs);
/// Writes both: `path` as JSON and, next to it, the same name with .csv.
Status write_report(const std::string& path, const std::string& tool, const std::string& source,
                    const std::vector<RunRecord>& runs);
/// Renders the human table printed on stdout.
std::string format_table(const std::vector<RunRecord>& runs);

/// Adds the autotuner's choice to a record's knobs as "autotune.*" strings (fusion_threshold,
/// cycle_time_ms, cache, hierarchical_allreduce/allgather, samples, done, tuning_steps).
void add_autotune_knobs(const AutotuneState& t, int tuning_steps, std::map<std::string, std::string>* knobs);

}  // namespace hvd::report
