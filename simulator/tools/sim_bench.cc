// hvdsim_bench: how fast the simulator runs (prints figures; not a test).
//   hvdsim_bench [scenario] [--np 64,128,256,512] [--model resnet101] [--steps N] [--sweep]
//                [--scale] [--set path=value ...]
// For each np, from one run of 1 warm-up and N measured steps: wall seconds per simulated
// training step (the wall time from the end of the warm-up step to the end of the last
// step, as rank 0's replay passes them, divided by N: RunOutcome::steps_wall_s), the same
// in CPU seconds, and the child's peak RSS. A star cluster too small for np gets more
// servers (nodes = np / GPUs per server, rounded up); other topologies must be sized with
// --set. With two or more
// np: the fitted growth exponent (least-squares slope of log wall/step and log peak RSS
// against log np: 1 = linear). --scale: np 512,1024,2048,4096 and --steps 1.
// With --sweep: the whole scenario sweep's wall time as hvdsim runs it.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "hvd/sim/isolate.h"
#include "hvd/sim/collective_sweep.h"
#include "hvd/sim/runner.h"

using namespace hvd::sim;

namespace {

struct Figure {
  double wall = 0, simulated = 0;
  double steps_wall = 0, steps_cpu = 0;  // over the measured steps
  double sim_step = 0;                   // simulated seconds per step
  int64_t rss = 0;
};

// Least-squares slope of log(y) against log(x) (points with y <= 0 left out; NaN if fewer
// than two remain).
double growth_exponent(const std::vector<double>& x, const std::vector<double>& y) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] > 0) || !(y[i] > 0)) continue;
    const double lx = std::log(x[i]), ly = std::log(y[i]);
    n += 1, sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly;
  }
  const double d = n * sxx - sx * sx;
  return n < 2 || d <= 0 ? std::nan("") : (n * sxy - sx * sy) / d;
}

Figure run_once(const ScenarioPoint& base, const std::string& model, int np, int steps) {
  ScenarioPoint pt = base;
  // A built star cluster grows with np (more servers on the one switch).
  ClusterSpec& c = pt.cluster;
  if (np > c.gpus() && c.platform_file.empty() && c.network.topology == "star" && c.gpus_per_node > 0)
    c.nodes = (np + c.gpus_per_node - 1) / c.gpus_per_node;
  pt.workload.warmup_steps = 1;
  pt.workload.steps = steps;
  std::string out;
  hvd::Status s = run_isolated(
      [&](std::string* r) {
        RunOutcome o;
        hvd::Status st = simulate_run(pt, model, np, RunOptions{}, &o);
        std::ostringstream os;
        os.precision(17);
        os << o.wall_s << ' ' << o.simulated_s << ' ' << o.peak_rss_kib << ' ' << o.steps_wall_s << ' '
           << o.steps_cpu_s << ' ' << o.record.step_time_s;
        *r = os.str();
        return st;
      },
      &out);
  if (!s.ok()) {
    std::cerr << "hvdsim_bench: " << s.message() << "\n";
    std::exit(1);
  }
  Figure f;
  std::istringstream is(out);
  is >> f.wall >> f.simulated >> f.rss >> f.steps_wall >> f.steps_cpu >> f.sim_step;
  return f;
}

}  // namespace

// --collective NP: an allreduce sweep of NP ranks, 1 GiB to 16 GiB by 2, through the runtime.
static int time_collective_sweep(const Scenario& sc, const std::string& path, int np) {
  std::vector<int64_t> sizes;
  for (int64_t b = int64_t{1} << 30; b <= int64_t{16} << 30; b *= 2) sizes.push_back(b);
  ScenarioPoint pt = sc.points[0];
  pt.config.cycle_time_ms = 0;  // as hvdsim --collective without a scenario cycle time
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<CollectivePoint> pts;
  hvd::Status s = simulate_collective_sweep(pt, np, NcclColl::kAllreduce, sizes, 1, 5, &pts);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!s.ok()) {
    std::cerr << "hvdsim_bench: " << s.message() << "\n";
    return 1;
  }
  std::printf("collective sweep %s: allreduce, np %d, 1 GiB to 16 GiB by 2 (%zu sizes, 6 calls each): %.1f s wall; "
              "16 GiB takes %.2f ms simulated\n",
              path.c_str(), np, pts.size(), wall, pts.back().seconds * 1e3);
  return 0;
}

// --sweep: the whole scenario, as hvdsim runs it.
static int time_sweep(const Scenario& sc, const std::string& path) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<hvd::report::RunRecord> rec;
  std::vector<RunOutcome> outs;
  hvd::Status s = run_scenario(sc, RunOptions{}, &rec, &outs);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!s.ok()) {
    std::cerr << "hvdsim_bench: " << s.message() << "\n";
    return 1;
  }
  int64_t peak = 0;
  for (const auto& o : outs) peak = std::max(peak, o.peak_rss_kib);
  std::printf("sweep %s: %zu runs in %.1f s wall (parallel %d), peak RSS %.1f MiB\n", path.c_str(), rec.size(), wall,
              sc.points[0].parallel, static_cast<double>(peak) / 1024.0);
  return 0;
}

// The command line.
struct BenchArgs {
  std::string path = "scenarios/roce25.json", model = "resnet101";
  std::vector<int> nps = {64, 128, 256, 512};
  int steps = 2;
  bool sweep = false;
  int collective_np = 0;
  std::vector<std::string> overrides;
};

// Parses the command line into *a; returns -1 to go on, else the exit code.
static int parse_args(int argc, char** argv, BenchArgs* out) {
  const char* usage =
      "usage: hvdsim_bench [scenario] [--np 64,128,256,512] [--model resnet101] [--steps N] [--sweep]\n"
      "                    [--scale] [--collective NP] [--set path=value ...]\n"
      "  --scale: np 512,1024,2048,4096, one measured step (a star cluster grows with np)\n"
      "  --collective NP: also time an allreduce sweep of NP ranks, 1 GiB to 16 GiB by 2, through the runtime\n"
      "                   (as hvdsim --collective: 5 calls after 1 per size; e.g. scenarios/dgx_h100.json\n"
      "                   --set cluster.nodes=128 --collective 1024)\n";
  // A positive integer, or a one-line error naming the flag and exit code 2.
  auto positive = [&](const std::string& flag, const std::string& text, int* out) {
    char* end = nullptr;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end || v < 1 || v > (1 << 20)) {
      std::cerr << "hvdsim_bench: " << flag << ": '" << text << "' is not a positive integer\n";
      return false;
    }
    *out = static_cast<int>(v);
    return true;
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::cout << usage;
      return 0;
    }
    const bool takes_value = a == "--np" || a == "--model" || a == "--steps" || a == "--set" || a == "--collective";
    if (takes_value && i + 1 >= argc) {
      std::cerr << "hvdsim_bench: " << a << " needs a value\n" << usage;
      return 2;
    }
    if (a == "--np") {
      out->nps.clear();
      std::stringstream ss(argv[++i]);
      std::string x;
      while (std::getline(ss, x, ',')) {
        int np = 0;
        if (!positive("--np", x, &np)) return 2;
        out->nps.push_back(np);
      }
      if (out->nps.empty()) {
        std::cerr << "hvdsim_bench: --np: empty list\n";
        return 2;
      }
    } else if (a == "--model") {
      out->model = argv[++i];
    } else if (a == "--steps") {
      if (!positive("--steps", argv[++i], &out->steps)) return 2;
    } else if (a == "--collective") {
      if (!positive("--collective", argv[++i], &out->collective_np)) return 2;
    } else if (a == "--sweep") {
      out->sweep = true;
    } else if (a == "--scale") {
      out->nps = {512, 1024, 2048, 4096};
      out->steps = 1;
    } else if (a == "--set") {
      out->overrides.push_back(argv[++i]);
    } else if (a.rfind("-", 0) == 0) {
      std::cerr << "hvdsim_bench: unknown option '" << a << "'\n" << usage;
      return 2;
    } else {
      out->path = a;
    }
  }
  return -1;
}

int main(int argc, char** argv) {
  BenchArgs args;
  if (const int rc = parse_args(argc, argv, &args); rc >= 0) return rc;
  const std::string& path = args.path;
  const std::string& model = args.model;
  const std::vector<int>& nps = args.nps;
  const int steps = args.steps;
  Scenario sc;
  hvd::Status s = load_scenario(path, args.overrides, &sc);
  if (!s.ok()) {
    std::cerr << "hvdsim_bench: " << s.message() << "\n";
    return 2;
  }
  // cpu/step_s: the same in CPU seconds (user + system) of the child, which moves less
  // than wall time when other work shares the machine.
  std::printf("%-10s %6s %14s %12s %14s %12s %12s\n", "model", "np", "wall/step_s", "cpu/step_s", "sim_step_s",
              "wall_1+N_s", "peak_rss_MiB");
  std::vector<double> xs, walls, cpus, rsss;
  for (int np : nps) {
    const Figure f = run_once(sc.points[0], model, np, steps);
    const double per_step = f.steps_wall / steps;
    const double sim_step = f.sim_step;
    const double cpu_step = f.steps_cpu / steps;
    std::printf("%-10s %6d %14.3f %12.3f %14.4f %12.2f %12.1f\n", model.c_str(), np, per_step, cpu_step, sim_step,
                f.wall, static_cast<double>(f.rss) / 1024.0);
    std::fflush(stdout);
    xs.push_back(np);
    walls.push_back(per_step);
    cpus.push_back(cpu_step);
    rsss.push_back(static_cast<double>(f.rss));
  }
  if (xs.size() >= 2)
    std::printf("growth exponent (log-log slope over np %d..%d): wall/step %.2f, cpu/step %.2f, peak RSS %.2f "
                "(1 = linear)\n",
                nps.front(), nps.back(), growth_exponent(xs, walls), growth_exponent(xs, cpus),
                growth_exponent(xs, rsss));
  if (args.collective_np > 0 && time_collective_sweep(sc, path, args.collective_np) != 0) return 1;
  if (args.sweep && time_sweep(sc, path) != 0) return 1;
  return 0;
}
