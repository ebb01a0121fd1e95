// hvdsim: capacity planning by simulation. Loads a scenario, simulates every run of its
// sweep (the real runtime and training-step replay over a SimGrid model of the cluster),
// prints the table, writes the report and, on request, one timeline per run.
//
//   hvdsim SCENARIO [--report out.json] [--timeline-dir DIR] [--set k=v ...] [--with-data]
//          [--sweep]   (also print the best setting per model and np)
//
// Exit codes: 0 ok, 1 simulation failure, 2 bad input (scenario, options).
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>

#include "hvd/report/report.h"
#include "hvd/sim/runner.h"
#include "hvd/sim/scenario.h"

int main(int argc, char** argv) {
  CLI::App app{"hvdsim: simulate Horovod-style data-parallel training on a modelled cluster"};
  std::string scenario_path, report_path, timeline_dir;
  std::vector<std::string> sets;
  bool with_data = false, quiet = false, best = false;
  int parallel = 0;
  app.add_option("scenario", scenario_path, "scenario JSON file (see scenarios/)")->required();
  app.add_option("--report", report_path, "write the JSON report here (and the CSV beside it)");
  app.add_option("--timeline-dir", timeline_dir, "write one Chrome-trace timeline per run here");
  app.add_option("--set", sets, "override a scenario value: path=value (e.g. runtime.fusion_threshold=32MiB)");
  app.add_flag("--with-data", with_data, "move and reduce real bytes (small runs)");
  app.add_option("-j,--parallel", parallel, "simulations at once (default: the scenario's, 2)");
  app.add_flag("-q,--quiet", quiet, "no progress on stderr");
  app.add_flag("--sweep", best,
               "after the table, the best setting per model and np over the sweep (autotuned knobs when "
               "runtime.autotune is on)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "hvdsim: " << e.what() << " (see hvdsim --help)\n";
    return 2;
  }
  hvd::sim::Scenario sc;
  hvd::Status s = hvd::sim::load_scenario(scenario_path, sets, &sc);
  if (!s.ok()) {
    std::cerr << "hvdsim: " << s.message() << "\n";
    return 2;
  }
  if (!timeline_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(timeline_dir, ec);
    if (ec) {
      std::cerr << "hvdsim: --timeline-dir: cannot create '" << timeline_dir << "': " << ec.message() << "\n";
      return 2;
    }
  }
  hvd::sim::RunOptions opts;
  opts.timeline_dir = timeline_dir;
  opts.with_data = with_data;
  opts.parallel = parallel;
  if (!quiet) opts.progress = [](const std::string& line) { std::cerr << "hvdsim: " << line << std::endl; };
  std::vector<hvd::report::RunRecord> records;
  s = hvd::sim::run_scenario(sc, opts, &records);
  if (!s.ok()) {
    std::cerr << "hvdsim: " << s.message() << "\n";
    return s.code() == hvd::StatusCode::kInvalidArgument ? 2 : 1;
  }
  std::cout << hvd::report::format_table(records);
  if (best) std::cout << "\n" << hvd::sim::format_best_per_np(records);
  if (!report_path.empty()) {
    s = hvd::report::write_report(report_path, "hvdsim", scenario_path, records);
    if (!s.ok()) {
      std::cerr << "hvdsim: " << s.message() << "\n";
      return 1;
    }
  }
  return 0;
}
