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
  /// hvdsim --seeds K (K > 1): the figures above are means over K draws of the random
  /// parameters (GPU speeds), and these their range. K = 1: not written.
  int seeds = 1;
  double images_per_sec_lo = 0, images_per_sec_hi = 0;
  double scaling_efficiency_lo = 0, scaling_efficiency_hi = 0;
};

/// A published scaling efficiency to compare with (a scenario's "reference" entries).
struct Reference {
  std::string model;              ///< model name, as records name it
  int np = 0;                     ///< ranks
  double scaling_efficiency = 0;  ///< a fraction, as RunRecord::scaling_efficiency (0.9: 90 %)
  std::string source;             ///< where it was published
};

/// nccl-tests bus-bandwidth factor for `op` at `n` ranks.
double busbw_factor(const std::string& op, int n);
/// Fills algbw/busbw from bytes and time.
void fill_bandwidth(CollectiveRecord* c, int n);
/// Writes `{"tool", "version", "source", "runs": [...]}` to `path`, and `"reference": [...]`
/// when there are published points.
Status write_json(const std::string& path, const std::string& tool, const std::string& source,
                  const std::vector<RunRecord>& runs, const std::vector<Reference>& reference = {});
/// Writes the CSV (one line per run) to `path`; with five more columns (seeds and the
/// lo/hi of images/s and efficiency) when a record has seeds > 1.
Status write_csv(const std::string& path, const std::vector<RunRecord>& runs);
/// Writes both: `path` as JSON and, next to it, the same name with .csv.
Status write_report(const std::string& path, const std::string& tool, const std::string& source,
                    const std::vector<RunRecord>& runs, const std::vector<Reference>& reference = {});
/// Renders the human table printed on stdout: with [min-max] beside images/s and efficiency
/// when a record has seeds > 1, and the published efficiency of the rows `reference` names
/// (model and np) with the difference in points.
std::string format_table(const std::vector<RunRecord>& runs, const std::vector<Reference>& reference = {});

/// Adds the autotuner's choice to a record's knobs as "autotune.*" strings (fusion_threshold,
/// cycle_time_ms, cache, hierarchical_allreduce/allgather, samples, done, tuning_steps).
void add_autotune_knobs(const AutotuneState& t, int tuning_steps, std::map<std::string, std::string>* knobs);

}  // namespace hvd::report
