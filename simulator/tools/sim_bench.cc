// hvdsim_bench: how fast the simulator runs (prints figures; not a test).
//   hvdsim_bench [scenario] [--np 64,128,256,512] [--model resnet101] [--steps N] [--sweep]
// For each np: wall seconds per simulated training step (one warm-up step excluded: the
// wall time of a run with 1+N steps minus a run with 1 step, divided by N), and the
// child's peak RSS. With --sweep: the whole scenario sweep's wall time as hvdsim runs it.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "hvd/sim/isolate.h"
#include "hvd/sim/runner.h"

using namespace hvd::sim;

namespace {

struct Figure {
  double wall = 0, simulated = 0;
  int64_t rss = 0;
};

Figure run_once(const ScenarioPoint& base, const std::string& model, int np, int steps) {
  ScenarioPoint pt = base;
  pt.workload.warmup_steps = 1;
  pt.workload.steps = steps;
  std::string out;
  hvd::Status s = run_isolated(
      [&](std::string* r) {
        RunOutcome o;
        hvd::Status st = simulate_run(pt, model, np, RunOptions{}, &o);
        std::ostringstream os;
        os << o.wall_s << ' ' << o.simulated_s << ' ' << o.peak_rss_kib;
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
  is >> f.wall >> f.simulated >> f.rss;
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = "scenarios/roce25.json", model = "resnet101";
  std::vector<int> nps = {64, 128, 256, 512};
  int steps = 2;
  bool sweep = false;
  const char* usage =
      "usage: hvdsim_bench [scenario] [--np 64,128,256,512] [--model resnet101] [--steps N] [--sweep]\n";
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
    const bool takes_value = a == "--np" || a == "--model" || a == "--steps";
    if (takes_value && i + 1 >= argc) {
      std::cerr << "hvdsim_bench: " << a << " needs a value\n" << usage;
      return 2;
    }
    if (a == "--np") {
      nps.clear();
      std::stringstream ss(argv[++i]);
      std::string x;
      while (std::getline(ss, x, ',')) {
        int np = 0;
        if (!positive("--np", x, &np)) return 2;
        nps.push_back(np);
      }
      if (nps.empty()) {
        std::cerr << "hvdsim_bench: --np: empty list\n";
        return 2;
      }
    } else if (a == "--model") {
      model = argv[++i];
    } else if (a == "--steps") {
      if (!positive("--steps", argv[++i], &steps)) return 2;
    } else if (a == "--sweep") {
      sweep = true;
    } else if (a.rfind("-", 0) == 0) {
      std::cerr << "hvdsim_bench: unknown option '" << a << "'\n" << usage;
      return 2;
    } else {
      path = a;
    }
  }
  Scenario sc;
  hvd::Status s = load_scenario(path, {}, &sc);
  if (!s.ok()) {
    std::cerr << "hvdsim_bench: " << s.message() << "\n";
    return 2;
  }
  std::printf("%-10s %6s %14s %14s %12s %12s\n", "model", "np", "wall/step_s", "sim_step_s", "wall_1+N_s", "peak_rss_MiB");
  for (int np : nps) {
    Figure one = run_once(sc.points[0], model, np, 1);
    Figure more = run_once(sc.points[0], model, np, 1 + steps);
    const double per_step = (more.wall - one.wall) / steps;
    const double sim_step = (more.simulated - one.simulated) / steps;
    std::printf("%-10s %6d %14.3f %14.4f %12.2f %12.1f\n", model.c_str(), np, per_step, sim_step,
                more.wall, static_cast<double>(more.rss) / 1024.0);
    std::fflush(stdout);
  }
  if (sweep) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<hvd::report::RunRecord> rec;
    std::vector<RunOutcome> outs;
    s = run_scenario(sc, RunOptions{}, &rec, &outs);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!s.ok()) {
      std::cerr << "hvdsim_bench: " << s.message() << "\n";
      return 1;
    }
    int64_t peak = 0;
    for (const auto& o : outs) peak = std::max(peak, o.peak_rss_kib);
    std::printf("sweep %s: %zu runs in %.1f s wall (parallel %d), peak RSS %.1f MiB\n", path.c_str(),
                rec.size(), wall, sc.points[0].parallel, static_cast<double>(peak) / 1024.0);
  }
  return 0;
}
