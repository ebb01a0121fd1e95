// hvdsim: capacity planning by simulation. Loads a scenario, simulates every run of its
// sweep (the real runtime and training-step replay over a SimGrid model of the cluster),
// prints the table, writes the report and, on request, one timeline per run.
//
//   hvdsim SCENARIO [--report out.json] [--timeline-dir DIR] [--set k=v ...] [--with-data]
//          [--sweep]   (also print the best setting per model and np)
//          [--seeds K]   (each point K times with other GPU-speed draws: mean and [min-max])
//          [--shard i/N]   (only shard i of N, 0-based: a partial report for --merge)
//   hvdsim --merge PART.json ... [--report out.json]   (the shards' full report)
//   mpirun -np K hvdsim SCENARIO ...   (the sweep spread over K ranks; docs/simulator.md)
//
// Every input is checked before the first simulation: the scenario (scenario.h), the
// options' ranges, that the report can be written, and a platform file's routes.
//
// Exit codes: 0 ok, 1 simulation failure, 2 bad input (scenario, options).
#include <sched.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include "core/units.h"
#include "hvd/report/report.h"
#include "hvd/sim/collective_sweep.h"
#include "hvd/sim/distribute.h"
#include "hvd/sim/runner.h"
#include "hvd/sim/scenario.h"
#include "hvd/sim/world.h"

#include "collective_mode.h"
#include "elastic_reset_mode.h"

namespace {

// CPUs this process may run on (its affinity mask; 0 when unknown).
int cpus_allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
}

// What-if rows next to their baseline (same model and np, the label without the what-if).
void print_what_ifs(const hvd::sim::Scenario& sc, const std::vector<hvd::report::RunRecord>& recs) {
  std::map<std::string, const hvd::report::RunRecord*> base;
  std::map<std::string, std::pair<std::string, std::string>> what_if;  // label -> (name, base)
  for (const auto& r : recs) base[r.model + "/" + std::to_string(r.np) + "/" + r.label] = &r;
  for (const auto& pt : sc.points) {
    if (pt.what_if.empty()) continue;
    const size_t cut = pt.label.size() - pt.what_if.size();
    what_if[pt.label] = {pt.what_if, pt.label.substr(0, cut ? cut - 1 : 0)};
  }
  bool header = false;
  for (const auto& r : recs) {
    auto w = what_if.find(r.label);
    if (w == what_if.end()) continue;
    const std::string& name = w->second.first;
    auto it = base.find(r.model + "/" + std::to_string(r.np) + "/" + w->second.second);
    if (it == base.end()) continue;
    if (!header) {
      std::printf("\nWhat-ifs against the baseline:\n%-12s %5s %-28s %12s %12s %10s %10s\n",
                  "model", "np", "what-if", "images/s", "baseline", "eff.", "eff. base");
      header = true;
    }
    std::printf("%-12s %5d %-28s %12.1f %12.1f %9.1f%% %9.1f%%\n", r.model.c_str(), r.np,
                name.c_str(), r.images_per_sec, it->second->images_per_sec,
                100 * r.scaling_efficiency, 100 * it->second->scaling_efficiency);
  }
}

// The table (what-ifs, best settings) on stdout and the report: a whole sweep's, or --merge's.
int print_and_write(const hvd::sim::Scenario& sc, const std::vector<hvd::report::RunRecord>& records,
                    bool best, const std::string& report_path, const std::string& source) {
  std::cout << hvd::report::format_table(records, sc.reference);
  print_what_ifs(sc, records);
  if (best) std::cout << "\n" << hvd::sim::format_best_per_np(records);
  if (!report_path.empty()) {
    hvd::Status s = hvd::report::write_report(report_path, "hvdsim", source, records, sc.reference);
    if (!s.ok()) {
      std::cerr << "hvdsim: " << s.message() << "\n";
      return 1;
    }
  }
  return 0;
}

// The command line, as parsed.
struct Args {
  std::string scenario_path, report_path, timeline_dir;
  std::vector<std::string> sets;
  bool with_data = false, quiet = false, best = false;
  int parallel = 0, seeds = 0;
  std::string collective, min_b = "8", max_b = "64MiB";
  int64_t factor = 8;
  int sweep_np = 0, iters = 20, warmup = 5, gpus_per_thread = 1;
  std::string datatype = "float", op = "sum";
  bool raw_only = false;
  bool elastic_reset = false;
  double optimizer_slots = -1, detect_s = 0.05;
  int commit_every = 1;
  std::string shard;
  std::vector<std::string> merge;
};


// A number in [lo, hi]; CLI11's Range lets nan through (every comparison with it is false).
CLI::Validator finite_in(double lo, double hi) {
  std::ostringstream range;
  range << "[" << lo << ", " << hi << "]";
  return CLI::Validator(
      [lo, hi, r = range.str()](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v) || !std::isfinite(v) || v < lo || v > hi)
          return "'" + text + "' is not a number in " + r;
        return "";
      },
      "NUMBER in " + range.str());
}

void add_flags(CLI::App& app, Args& a) {
  app.footer(
      "Bad input (scenario, options) is one line on stderr and exit code 2, before anything is "
      "simulated. A scenario runs at most 1024 simulations (each model at each np, the np=1 "
      "baseline included, at each sweep point): raise sweep.max_runs for more, e.g. --set "
      "sweep.max_runs=5000.");
  app.add_option("scenario", a.scenario_path, "scenario JSON file (see scenarios/)");
  app.add_option("--report", a.report_path, "write the JSON report here (and the CSV beside it)");
  app.add_option("--timeline-dir", a.timeline_dir, "write one Chrome-trace timeline per run here");
  app.add_option("--set", a.sets, "override a scenario value: path=value (e.g. runtime.fusion_threshold=32MiB)");
  app.add_flag("--with-data", a.with_data, "move and reduce real bytes (small runs)");
  app.add_option("-j,--parallel", a.parallel, "simulations at once, 1 to 256 (default: the scenario's, 2)")
      ->check(CLI::Range(1, 256));
  app.add_option("--seeds", a.seeds,
                 "run every point K times, 1 to 1000, with GPU-speed seeds cluster.gpu_speed_seed + 0..K-1, and "
                 "report the mean and [min-max] (default: the scenario's simulation.seeds, 1)")
      ->check(CLI::Range(1, 1000));
  app.add_flag("-q,--quiet", a.quiet, "no progress on stderr");
  app.add_flag("--sweep", a.best,
               "after the table, the best setting per model and np over the sweep (autotuned knobs when "
               "runtime.autotune is on)");
  app.add_option("--collective", a.collective,
                 "a size sweep of one collective instead, in nccl-tests' columns: raw (NCCL as the backend runs it) "
                 "beside hvd (the runtime API)")
      ->check(CLI::IsMember(hvd::sim::nccl_coll_names()));
  app.add_flag("--raw-only", a.raw_only, "sweep: the raw column alone (no runtime simulation)");
  app.add_option("-b,--minbytes", a.min_b, "sweep: smallest size (default 8)");
  app.add_option("-e,--maxbytes", a.max_b, "sweep: largest size (default 64MiB)");
  app.add_option("-f,--stepfactor", a.factor, "sweep: size multiplier, 2 to 2^30 (default 8)")
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 30));
  app.add_option("--np", a.sweep_np, "sweep and reset: ranks, 1 to 1048576 (default: the largest of sweep.np)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("-n,--iters", a.iters, "sweep: timed calls per size (default 20)")->check(CLI::Range(1, 100000));
  app.add_option("-g,--ngpus", a.gpus_per_thread,
                 "sweep: GPUs one host thread drives in the raw column, as nccl-tests -g (default 1: a process per "
                 "GPU, as a training job runs; nccl-tests -g 8 on one node pays the thread's launch of eight kernels)")
      ->check(CLI::Range(1, 1024));
  app.add_option("-d,--datatype", a.datatype, "sweep: element type, as nccl-tests -d (default float)")
      ->check(CLI::IsMember({"int8", "uint8", "int32", "int64", "half", "bfloat16", "float", "double"}));
  app.add_option("-o,--op", a.op, "sweep: reduction, as nccl-tests -o (default sum)")
      ->check(CLI::IsMember({"sum", "prod", "min", "max", "avg"}));
  app.add_option("-w,--warmup-iters", a.warmup, "sweep: warm-up calls (default 5)")->check(CLI::Range(0, 100000));
  app.add_option("--shard", a.shard,
                 "run only shard i of N (0-based, e.g. $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT) and write a "
                 "partial report for --merge to --report");
  app.add_option("--merge", a.merge, "merge the partial reports of --shard runs into the full report (--report)");
  app.add_flag("--elastic-reset", a.elastic_reset,
               "instead of training runs: what one elastic reset costs (a worker of --np lost; the others meet "
               "again, take the state by broadcast and redo the steps since the last commit)");
  app.add_option("--optimizer-slots", a.optimizer_slots, "reset: optimizer tensors per parameter (default: workload.optimizer's: sgd 0, momentum 1, adam and lamb 2)")
      ->check(finite_in(0, 16));
  app.add_option("--commit-every", a.commit_every, "reset: steps between commits (default 1)")->check(CLI::Range(1, 1000000));
  app.add_option("--detect", a.detect_s, "reset: seconds from the loss to the restore (default 0.05, measured)")
      ->check(finite_in(0, 3600));
}

// Flags that do not go together; "" when they do. A flag a mode does not use is an error,
// never silently ignored.
std::string conflicts(const CLI::App& app, const Args& a) {
  if (!a.elastic_reset)
    for (const char* f : {"--optimizer-slots", "--commit-every", "--detect"})
      if (app.count(f)) return std::string(f) + ": applies to --elastic-reset only";
  if (a.elastic_reset) {
    if (!a.collective.empty()) return "--elastic-reset: not with --collective (one mode at a time)";
    for (const char* f : {"--with-data", "--timeline-dir", "--parallel", "--sweep", "--merge", "--report", "--shard",
                          "--seeds", "--minbytes", "--maxbytes", "--stepfactor", "--iters", "--warmup-iters", "--raw-only",
                          "--ngpus", "--datatype", "--op"})
      if (app.count(f)) return std::string(f) + ": not with --elastic-reset";
    if (a.scenario_path.empty()) return "scenario: --elastic-reset needs a scenario file";
    return "";
  }
  if (a.sweep_np != 0 && a.collective.empty())
    return "--np: applies to --collective only (runs take sweep.np: --set 'sweep.np=[" + std::to_string(a.sweep_np) + "]')";
  if (a.collective.empty())
    for (const char* f : {"--minbytes", "--maxbytes", "--stepfactor", "--iters", "--warmup-iters", "--raw-only", "--ngpus",
                          "--datatype", "--op"})
      if (app.count(f)) return std::string(f) + ": applies to --collective only";
  if (!a.collective.empty())
    for (const char* f : {"--with-data", "--timeline-dir", "--parallel", "--sweep", "--merge"})
      if (app.count(f)) return std::string(f) + ": not with --collective (it applies to training runs)";
  if (a.raw_only && (app.count("--iters") || app.count("--warmup-iters")))
    return "--raw-only: no runtime calls to time (drop --iters / --warmup-iters)";
  if (app.count("--report")) {  // checked before hours of simulation
    std::vector<std::pair<std::string, std::string>> inputs = {{"scenario", a.scenario_path}};
    for (const std::string& m : a.merge) inputs.emplace_back("partial report", m);
    if (const std::string why = hvd::report::report_path_problem(a.report_path, inputs); !why.empty())
      return "--report: " + why;
  }
  if (app.count("--timeline-dir") && a.timeline_dir.empty()) return "--timeline-dir: an empty path";
  if (!a.merge.empty() && (!a.scenario_path.empty() || app.count("--shard") || app.count("--seeds")))
    return "--merge takes partial reports only (no scenario, no --shard, no --seeds)";
  if (a.merge.empty() && a.scenario_path.empty())
    return "scenario: a scenario file is required (or --merge PART.json ...; see hvdsim --help)";
  if (app.count("--shard") && a.report_path.empty()) return "--shard: needs --report (the partial report to merge)";
  if (app.count("--shard") && !a.collective.empty()) return "--shard: not with --collective";
  if (app.count("--seeds") && !a.collective.empty())
    return "--seeds: not with --collective (a collective sweep has no GPU speeds to draw)";
  return "";
}

// What the scenario needs on disk before anything is simulated: its platform files (SimGrid
// aborts on hosts it cannot route, so they are checked first, for the most ranks any run
// puts on them) and the timeline folder. Returns the exit code, or 0 to go on.
int check_files(const hvd::sim::Scenario& sc, const Args& a) {
  std::map<std::string, int> platforms;
  for (const auto& pt : sc.points)
    if (!pt.cluster.platform_file.empty())
      for (int n : pt.np)
        platforms[pt.cluster.platform_file] = std::max({platforms[pt.cluster.platform_file], n, a.sweep_np});
  for (const auto& [file, np] : platforms)
    if (hvd::Status s = hvd::sim::check_platform_file(file, np); !s.ok()) {
      std::cerr << "hvdsim: " << sc.source << ": " << s.message() << "\n";
      return s.code() == hvd::StatusCode::kInvalidArgument ? 2 : 1;
    }
  if (!a.timeline_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(a.timeline_dir, ec);
    if (ec) {
      std::cerr << "hvdsim: --timeline-dir: cannot create '" << a.timeline_dir << "': " << ec.message() << "\n";
      return 2;
    }
  }
  return 0;
}

// -q: the simulated ranks' warnings (a stall warning every 60 simulated seconds of a run on an
// absurd network is thousands of lines) are quiet too, unless the scenario sets a log level.
hvd::sim::Scenario quieted(const hvd::sim::Scenario& sc) {
  hvd::sim::Scenario q = sc;
  for (auto& pt : q.points) {
    bool set = false;
    for (const char* k : {"log_level", "LOG_LEVEL", "HVD_LOG_LEVEL", "HOROVOD_LOG_LEVEL"}) set = set || pt.knobs.count(k);
    if (!set) pt.config.log_level = "error";
  }
  return q;
}

// The training runs of the scenario (all of them, or this MPI rank's / --shard's share).
int run_training(const hvd::sim::Scenario& scenario, const Args& a, hvd::sim::Spread& spread) {
  const hvd::sim::Scenario sc = a.quiet ? quieted(scenario) : scenario;
  hvd::sim::RunOptions opts;
  opts.timeline_dir = a.timeline_dir;
  opts.with_data = a.with_data;
  opts.parallel = a.parallel;
  if (!a.quiet) opts.progress = [](const std::string& line) { std::cerr << "hvdsim: " << line << std::endl; };
  // Simulations run in forked children, which inherit this process's CPU binding: mpirun
  // binds each rank to one core by default (Open MPI, up to 2 ranks), and its simulations
  // then share that core (a 3-model roce25 sweep under `mpirun -np 1`: 16 s instead of 7).
  const int at_once = a.parallel > 0 ? a.parallel : (sc.points.empty() ? 1 : sc.points[0].parallel);
  if (const int cpus = cpus_allowed(); !a.quiet && spread.is_root() && cpus > 0 && cpus < at_once)
    std::cerr << "hvdsim: note: this process may run on " << cpus << " CPU" << (cpus == 1 ? "" : "s")
              << " (its affinity) but runs up to " << at_once << " simulations at once, which share "
              << (cpus == 1 ? "it" : "them") << "; under mpirun add --bind-to none or give each rank "
              << at_once << " cores (--map-by slot:PE=" << at_once << ")\n";
  std::vector<hvd::report::RunRecord> records;
  hvd::Status s = spread.run(sc, opts, &records);
  if (!s.ok()) {
    std::cerr << "hvdsim: " << s.message() << "\n";
    return s.code() == hvd::StatusCode::kInvalidArgument ? 2 : 1;
  }
  if (spread.sharded()) {
    s = spread.write_shard(a.report_path, a.scenario_path, a.sets, a.with_data);
    if (!s.ok()) std::cerr << "hvdsim: " << s.message() << "\n";
    return s.ok() ? 0 : 1;
  }
  if (!spread.is_root()) return 0;
  return print_and_write(sc, records, a.best, a.report_path, a.scenario_path);
}

int hvdsim_main(int argc, char** argv, hvd::sim::Spread& spread) {
  CLI::App app{"hvdsim: simulate Horovod-style data-parallel training on a modelled cluster"};
  Args a;
  add_flags(app, a);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "hvdsim: " << e.what() << " (see hvdsim --help)\n";
    return 2;
  }
  if (const std::string why = conflicts(app, a); !why.empty()) {
    std::cerr << "hvdsim: " << why << "\n";
    return 2;
  }
  if (!a.merge.empty()) {
    hvd::sim::MergedSweep m;
    if (hvd::Status s = hvd::sim::merge_shards(a.merge, &m); !s.ok()) {
      std::cerr << "hvdsim: " << s.message() << "\n";
      return 2;
    }
    return print_and_write(m.scenario, m.records, a.best, a.report_path, m.source);
  }
  if (app.count("--shard"))
    if (hvd::Status s = spread.set_shard(a.shard); !s.ok()) {
      std::cerr << "hvdsim: " << s.message() << "\n";
      return 2;
    }
  // --seeds K is simulation.seeds=K, last: it wins over the scenario and --set (and the
  // sweep's size limit counts the K runs of each point).
  if (app.count("--seeds")) a.sets.push_back("simulation.seeds=" + std::to_string(a.seeds));
  hvd::sim::Scenario sc;
  if (hvd::Status s = hvd::sim::load_scenario(a.scenario_path, a.sets, &sc); !s.ok()) {
    std::cerr << "hvdsim: " << s.message() << "\n";
    return 2;
  }
  if (const int rc = check_files(sc, a)) return rc;
  if (a.elastic_reset) {
    hvd::sim::ResetArgs r;
    r.np = a.sweep_np;
    r.optimizer_slots = a.optimizer_slots;
    r.commit_every = a.commit_every;
    r.detect_s = a.detect_s;
    return hvd::sim::run_elastic_reset(sc, r);
  }
  if (!a.collective.empty()) {
    // A collective sweep runs one cluster and no workload: what would shape a training run
    // only is refused, not dropped.
    for (const std::string& set : a.sets)
      if (set.rfind("workload.", 0) == 0) {
        std::cerr << "hvdsim: --set " << set.substr(0, set.find('=')) << ": not with --collective (a collective sweep runs no workload)\n";
        return 2;
      }
    if (sc.points.size() > 1) {
      std::cerr << "hvdsim: --collective: " << sc.source << " describes " << sc.points.size()
                << " clusters or runtimes (what_if entries or sweep axes); a collective sweep runs one: pick it with --set\n";
      return 2;
    }
    hvd::sim::CollectiveArgs c;
    c.collective = a.collective;
    c.min_b = a.min_b;
    c.max_b = a.max_b;
    c.factor = a.factor;
    c.np = a.sweep_np;
    c.iters = a.iters;
    c.warmup = a.warmup;
    c.raw_only = a.raw_only;
    c.gpus_per_thread = a.gpus_per_thread;
    c.datatype = a.datatype;
    c.op = a.op;
    c.op_given = app.count("--op") > 0;
    c.report_path = a.report_path;
    return hvd::sim::run_collective(sc, c);
  }
  return run_training(sc, a, spread);
}

}  // namespace

int main(int argc, char** argv) {
  hvd::sim::Spread spread;  // under mpirun/srun, before anything forks (distribute.h)
  return spread.finish(hvdsim_main(argc, argv, spread));
}
