// Runs a scenario: for every sweep point, model and np, one simulation (in its own child
// process) of the training-step replay over the real runtime; returns report records.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hvd/report/report.h"
#include "hvd/sim/scenario.h"
#include "hvd/sim/world.h"

namespace hvd::sim {

/// How to run.
struct RunOptions {
  std::string timeline_dir;   ///< write one timeline per run here ("" = none)
  bool with_data = false;     ///< force real bytes (else the scenario's choice)
  int parallel = 0;           ///< simulations at once (0: the scenario's choice)
  std::function<void(const std::string&)> progress;  ///< one line per finished run
};

/// One simulated run's outcome (what the child sends back).
struct RunOutcome {
  report::RunRecord record;   ///< report fields (efficiency filled by run_scenario)
  double wall_s = 0;          ///< wall-clock seconds the simulation took
  double simulated_s = 0;     ///< simulated seconds
  int64_t peak_rss_kib = 0;   ///< child's peak resident memory
  /// Wall-clock and CPU seconds the measured steps took: from the end of the last warm-up
  /// step to the end of the last step, as rank 0 saw them (the simulation processes events
  /// in simulated-time order, so that is the cost of simulating those steps, without
  /// start-up and tear-down). Without warm-up steps, from the start of the simulation.
  double steps_wall_s = 0;
  double steps_cpu_s = 0;
};

/// Simulates one (point, model, np) in the current process (once per process).
Status simulate_run(const ScenarioPoint& pt, const std::string& model, int np,
                    const RunOptions& opts, RunOutcome* out);

/// Runs the whole scenario (children in parallel); records in sweep order
/// (point, model, np), scaling efficiency against the simulated np=1 run. A point with
/// seeds K > 1 runs each (model, np) K times and reports one record: the means, and the
/// [min, max] of images/s and efficiency (each seed's against that seed's np=1 run).
Status run_scenario(const Scenario& sc, const RunOptions& opts, std::vector<report::RunRecord>* records,
                    std::vector<RunOutcome>* outcomes = nullptr);

/// One simulation of a sweep: a point, a model, an np. The np=1 runs that only serve as
/// the scaling-efficiency baseline (np 1 not in the sweep) are not reported.
struct SweepJob {
  size_t point = 0;     ///< index into Scenario::points
  std::string model;    ///< as the scenario names it
  int np = 0;           ///< ranks
  bool reported = true; ///< a record of the report (false: baseline only)
  int seed = 0;         ///< which draw, 0 .. point's seeds - 1 (cluster.gpu_speed_seed + seed)
};

/// The simulations run_scenario runs, in its order (point, model, [np=1 baseline], np),
/// each np once per seed (seed 0 first) when the point has seeds > 1.
std::vector<SweepJob> sweep_jobs(const Scenario& sc);

/// Runs the jobs `which` (indices into `jobs`, in that order) in forked children,
/// `opts.parallel` at a time; (*results)[i] (sized to jobs) is job i's outcome as JSON text.
/// A failure of any is returned (the first in `which` order, as "<model> np=<n>: ...",
/// its index in *failed) after all have ended.
Status run_sweep_jobs(const Scenario& sc, const RunOptions& opts, const std::vector<SweepJob>& jobs,
                      const std::vector<size_t>& which, std::vector<std::string>* results,
                      size_t* failed = nullptr);

/// The report records from every job's outcome (run_scenario's second half): scaling
/// efficiency against the np=1 job of the same point, model and seed, the seeds of one
/// (point, model, np) folded into one record; throws report::RecordError or nlohmann::json's
/// exceptions on outcome text that is not run_sweep_jobs'.
void sweep_records(const std::vector<SweepJob>& jobs, const std::vector<std::string>& results,
                   std::vector<report::RunRecord>* records, std::vector<RunOutcome>* outcomes = nullptr);

/// File name of a run's timeline: <model>_np<np>[_<label>].json (simulate_run adds
/// "seed=<seed>" to the label when the point has several seeds).
std::string timeline_name(const std::string& model, int np, const std::string& label);

/// The world of `np` ranks a point describes: its cluster, model choices, device costs, NCCL
/// settings and knobs (no timeline file: a run shares one writer).
WorldOptions world_options(const ScenarioPoint& pt, int np);

/// A run's autotune CSV: `path` with _<model>_np<np>[_<label>] before the extension.
std::string autotune_log_name(const std::string& path, const std::string& model, int np,
                              const std::string& label);

/// The best run per (model, np) across the scenario's sweep points (highest images/s),
/// as a table with the setting that achieved it (tuned values when autotune was on).
std::string format_best_per_np(const std::vector<report::RunRecord>& records);

}  // namespace hvd::sim
