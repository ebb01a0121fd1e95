// hvdrun's command line (hvdrun_args.h): parsing and every check that needs neither the
// network nor the environment; main() (hvdrun.cc) runs what it plans.
#include "hvdrun_args.h"

#include <algorithm>
#include <fstream>
#include <string>

#include "cli_flags.h"
#include "hvd/tcp.h"

namespace hvd::bench {

namespace {

const char* kDescription =
    "hvdrun: start a training command on N ranks of the hvd runtime (horovodrun-style).\n"
    "-np N on this host runs CMD under Open MPI's mpirun (--bind-to none, idle ranks yield\n"
    "their core, --oversubscribe when N > cores); -H/--hostfile pass hosts on. Under an outer\n"
    "mpirun, or with -np 1 on this host, CMD runs directly. Knob flags become HVD_* variables\n"
    "of the ranks (HVD_*/HOROVOD_* set by hand work too). --tcp (or --gloo) needs no MPI:\n"
    "hvdrun runs a rendezvous server and starts the ranks itself, those on other hosts of -H\n"
    "with ssh (HVDRUN_SSH replaces the ssh command).";

const char* kFooter =
    "\nExamples:\n"
    "  hvdrun -np 4 /usr/bin/python3 train.py --epochs 2   (an interpreter with torch: Debian's)\n"
    "  hvdrun -np 8 -H a:4,b:4 /usr/bin/python3 train.py\n"
    "  hvdrun -np 2 --timeline-filename /tmp/tl.json --cycle-time-ms 2 /usr/bin/python3 train.py\n"
    "  hvdrun --tcp -np 4 /usr/bin/python3 train.py   (no MPI)\n"
    "  hvdrun -np 2 --min-np 1 --max-np 4 --host-discovery-script ./hosts.sh /usr/bin/python3 train.py   (elastic)\n"
    "  hvdrun --check-build\n"
    "\nExit codes: CMD's own; 127 when CMD cannot be run (not found or not executable), as in a\n"
    "shell; 1 when mpirun or the ranks cannot be started; 2 bad input.\n";

// horovodrun --check-build's report: the frameworks, controllers and tensor operations
// this build has.
std::string check_build_text() {
  std::string s;
  auto row = [&s](bool on, const char* what) { s += std::string("    [") + (on ? 'X' : ' ') + "] " + what + "\n"; };
  s += std::string("hvd v") + HVD_VERSION + ":\n\nAvailable Frameworks:\n";
  row(HVD_BUILT_TENSORFLOW, "TensorFlow (hvd.tensorflow, hvd.keras)");
  row(HVD_BUILT_PYTORCH, "PyTorch (hvd.torch)");
  row(false, "MXNet");
  s += "\nAvailable Controllers:\n";
  row(HVD_BUILT_MPI, "MPI");
  row(true, "TCP (hvdrun --tcp, horovodrun's Gloo)");
  s += "\nAvailable Tensor Operations:\n";
  row(HVD_BUILT_NCCL, "NCCL (C++ runtime, GPU tensors)");
  row(false, "DDL");
  row(false, "CCL");
  row(HVD_BUILT_MPI, "MPI");
  row(true, "Gloo (the TCP backend: hvdrun --tcp)");
  return s;
}

// horovodrun's elastic flags; --host-discovery-script turns elastic mode on (over TCP).
void add_elastic_flags(CLI::App& app, ElasticOptions* e) {
  const char* g = "Elastic (over TCP)";
  app.add_option("--host-discovery-script", e->discovery_script,
                 "elastic mode: a command printing the usable hosts, one 'host:slots' line each (polled every second)")
      ->group(g);
  app.add_option("--min-np", e->min_np, "fewest workers to train with (default -np)")->group(g);
  app.add_option("--max-np", e->max_np, "most workers to start (default: every slot discovery offers)")->group(g);
  app.add_option("--slots-per-host", e->slots_per_host, "slots of a discovered host printed without ':slots' (default 1)")
      ->group(g);
  app.add_option("--elastic-timeout", e->elastic_timeout_s,
                 "seconds to wait for --min-np workers, and for a new world to form (default 600)")
      ->group(g);
  app.add_option("--reset-limit", e->reset_limit, "most times the world may be rebuilt before the job fails (default 100)")->group(g);
  app.add_option("--blacklist-cooldown-range", e->cooldown,
                 "MIN MAX: seconds a host with a failed worker gets no new workers (grows with each failure)")
      ->expected(2)
      ->allow_extra_args(false)
      ->group(g);
}

// The plan is taken by reference and moved out only once the message is built (a message
// may quote the plan's own command).
HvdrunPlan exit_with(HvdrunPlan& p, int code, std::string message) {
  p.mode = HvdrunPlan::Mode::kExit;
  p.exit_code = code;
  p.message = std::move(message);
  return std::move(p);
}

HvdrunPlan bad(HvdrunPlan& p, std::string message) { return exit_with(p, kExitBadInput, std::move(message)); }

}  // namespace

HvdrunPlan plan_hvdrun(int argc, const char* const* argv) {
  HvdrunPlan p;
  Options& o = p.o;
  KnobFlags k;
  CLI::App app(kDescription, "hvdrun");
  app.footer(kFooter);
  app.get_formatter()->column_width(34);
  app.prefix_command();  // the first positional argument starts CMD: all of it is CMD's
  add_launch_flags(app, &o);
  add_knob_flags(app, &k);
  bool tcp = false;
  p.start_timeout_s = kDefaultStartTimeoutS;
  app.add_flag("--tcp,--gloo", tcp, "run the ranks over the TCP backend, without MPI (hvdrun starts them)");
  app.add_option("--start-timeout", p.start_timeout_s,
                 "--tcp: seconds every rank has to reach the rendezvous and connect (default 30)");
  // Set by hvdrun itself for the ranks it starts (rank_status.h).
  app.add_option("--rank-status-dir", p.rank_status_dir)->group("");
  ElasticOptions& el = p.elastic;
  add_elastic_flags(app, &el);
  bool check_build = false, version = false, mpi = false;
  app.add_flag("--check-build", check_build,
               "print the frameworks, controllers and tensor operations this build has (also -cb)");
  app.add_flag("-v,--version", version, "print hvdrun's version");
  app.add_flag("--mpi", mpi, "run the ranks under Open MPI's mpirun (the default without --tcp)");
  std::vector<std::string> args = normalise_args(argc, argv, &app);
  std::reverse(args.begin(), args.end());  // CLI11 takes them in reverse order
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    p.out = app.help();
    return exit_with(p, kExitOk, "");
  } catch (const CLI::ParseError& e) {
    return bad(p, e.what());
  }
  if (check_build) {
    p.out = check_build_text();
    return exit_with(p, kExitOk, "");
  }
  if (version) {
    p.out = std::string("hvdrun (hvd) ") + HVD_VERSION + "\n";
    return exit_with(p, kExitOk, "");
  }
  if (mpi && tcp) return bad(p, "--mpi and --tcp/--gloo are exclusive: one controller runs the job");
  p.cmd = app.remaining();
  const std::vector<std::string>& cmd = p.cmd;
  if (cmd.empty()) return bad(p, "no command to run (e.g. hvdrun -np 2 python3 train.py; see --help)");
  // The command starts at the first argument that is not an option: an option hvdrun does
  // not know would otherwise become the command (and reach mpirun as one of its own).
  if (cmd[0].size() > 1 && cmd[0][0] == '-')
    return bad(p, "unknown option '" + cmd[0] + "' (hvdrun --help lists its options; mpirun's go in --mpi-args)");
  if (o.np < 1) return bad(p, "-np must be at least 1 (got " + std::to_string(o.np) + ")");
  if (!o.hosts.empty() && !o.hostfile.empty()) return bad(p, "-H/--hosts and --hostfile are exclusive");
  if (!o.hostfile.empty() && !std::ifstream(o.hostfile))
    return bad(p, "--hostfile: cannot read '" + o.hostfile + "'");
  const std::string knob_error = collect_knobs(app, k, &o);
  if (!knob_error.empty()) return bad(p, knob_error);
  if (!(p.start_timeout_s > 0) || p.start_timeout_s > 1e6)
    return bad(p, "--start-timeout must be a positive number of seconds (got " + fmt_number(p.start_timeout_s) + ")");
  if (!el.discovery_script.empty()) {
    if (!o.hosts.empty() || !o.hostfile.empty())
      return bad(p, "-H/--hostfile name fixed hosts; in elastic mode --host-discovery-script names them");
    if (!o.mpi_args.empty()) return bad(p, "--mpi-args is for mpirun; elastic mode runs over TCP, without MPI");
    if (mpi)
      return bad(p, "--mpi and --host-discovery-script are exclusive: elastic mode runs over TCP, without MPI");
    if (app.count("--reset-limit") && el.reset_limit < 0)
      return bad(p, "--reset-limit must be 0 or more (got " + std::to_string(el.reset_limit) + ")");
    el.np = o.np;
    if (!app.count("--min-np")) el.min_np = o.np;
    const std::string why = check_elastic_options(el);
    if (!why.empty()) return bad(p, why);
    p.mode = HvdrunPlan::Mode::kElastic;
    return p;
  }
  for (const char* f : {"--min-np", "--max-np", "--elastic-timeout", "--reset-limit", "--blacklist-cooldown-range",
                        "--slots-per-host"})
    if (app.count(f)) return bad(p, std::string(f) + " is for elastic mode: give --host-discovery-script too");
  if (tcp) {
    if (!o.hostfile.empty()) return bad(p, "--hostfile is for mpirun; with --tcp give -H host:slots,...");
    if (!o.mpi_args.empty()) return bad(p, "--mpi-args is for mpirun; --tcp runs without MPI");
    p.mode = HvdrunPlan::Mode::kTcp;
    return p;
  }
  p.mode = p.rank_status_dir.empty() ? HvdrunPlan::Mode::kMpi : HvdrunPlan::Mode::kRankStatus;
  return p;
}

}  // namespace hvd::bench
