// hvdrun: horovodrun's launcher for any command, on hvdbench's launcher code.
//
//   hvdrun -np 4 [-H host:slots,...] [--hostfile F] [--mpi-args "..."] [knob flags] CMD ARGS...
//   hvdrun --tcp -np 4 [-H host:slots,...] [--start-timeout S] [knob flags] CMD ARGS...
//   hvdrun [--tcp] -np 2 --min-np 1 --max-np 4 --host-discovery-script S [--elastic-timeout T]
//          [--reset-limit N] [--blacklist-cooldown-range MIN MAX] CMD ARGS...   (elastic)
//
// Starts CMD on N ranks with Open MPI's mpirun (localhost: --bind-to none, idle ranks yield,
// --oversubscribe beyond the cores; -H/--hostfile pass hosts on), the knob flags becoming
// HVD_* variables of the ranks. Under an outer mpirun (OMPI_COMM_WORLD_SIZE set), or with
// -np 1 on this host, it just runs CMD. With --tcp (or horovodrun's --gloo) there is no MPI:
// hvdrun starts the ranks itself over the TCP backend (tcp_launch.h). Bad input: one line,
// exit 2.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli_flags.h"
#include "elastic_driver.h"
#include "launcher.h"
#include "rank_status.h"
#include "hvd/tcp.h"
#include "tcp_launch.h"

namespace hb = hvd::bench;

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
    "\nExit codes: CMD's own; 1 when mpirun or CMD cannot be started; 2 bad input.\n";

// horovodrun --check-build's report: the frameworks, controllers and tensor operations
// this build has.
void print_check_build() {
  auto row = [](bool on, const char* what) { std::printf("    [%c] %s\n", on ? 'X' : ' ', what); };
  std::printf("hvd v%s:\n\nAvailable Frameworks:\n", HVD_VERSION);
  row(false, "TensorFlow");
  row(HVD_BUILT_PYTORCH, "PyTorch (hvd.torch)");
  row(false, "MXNet");
  std::printf("\nAvailable Controllers:\n");
  row(HVD_BUILT_MPI, "MPI");
  row(true, "TCP (hvdrun --tcp, horovodrun's Gloo)");
  std::printf("\nAvailable Tensor Operations:\n");
  row(HVD_BUILT_NCCL, "NCCL (C++ runtime, GPU tensors)");
  row(false, "DDL");
  row(false, "CCL");
  row(HVD_BUILT_MPI, "MPI");
  row(false, "Gloo");
}

// horovodrun's elastic flags; --host-discovery-script turns elastic mode on (over TCP).
void add_elastic_flags(CLI::App& app, hb::ElasticOptions* e) {
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
  app.add_option("--reset-limit", e->reset_limit, "most times the world may be rebuilt before the job fails")->group(g);
  app.add_option("--blacklist-cooldown-range", e->cooldown,
                 "MIN MAX: seconds a host with a failed worker gets no new workers (grows with each failure)")
      ->expected(2)
      ->allow_extra_args(false)
      ->group(g);
}

// Elastic mode: the flags checked, then hvdrun drives the job (elastic_driver.h).
int run_elastic(hb::ElasticOptions el, const hb::Options& o, CLI::App& app, const std::vector<std::string>& cmd);

int bad(const std::string& msg) {
  std::cerr << "hvdrun: " << msg << "\n";
  return hb::kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  hb::Options o;
  hb::KnobFlags k;
  CLI::App app(kDescription, "hvdrun");
  app.footer(kFooter);
  app.get_formatter()->column_width(34);
  app.prefix_command();  // the first positional argument starts CMD: all of it is CMD's
  hb::add_launch_flags(app, &o);
  hb::add_knob_flags(app, &k);
  bool tcp = false;
  double start_timeout = hvd::kDefaultStartTimeoutS;
  app.add_flag("--tcp,--gloo", tcp, "run the ranks over the TCP backend, without MPI (hvdrun starts them)");
  app.add_option("--start-timeout", start_timeout,
                 "--tcp: seconds every rank has to reach the rendezvous and connect (default 30)");
  std::string rank_status_dir;  // set by hvdrun itself for the ranks it starts (rank_status.h)
  app.add_option("--rank-status-dir", rank_status_dir)->group("");
  hb::ElasticOptions el;
  add_elastic_flags(app, &el);
  bool check_build = false;
  app.add_flag("--check-build", check_build, "print the frameworks, controllers and tensor operations this build has");
  std::vector<std::string> args = hb::normalise_args(argc, argv, &app);
  std::reverse(args.begin(), args.end());  // CLI11 takes them in reverse order
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return hb::kExitOk;
  } catch (const CLI::ParseError& e) {
    return bad(e.what());
  }
  if (check_build) {
    print_check_build();
    return hb::kExitOk;
  }
  std::vector<std::string> cmd = app.remaining();
  if (cmd.empty()) return bad("no command to run (e.g. hvdrun -np 2 python3 train.py; see --help)");
  // The command starts at the first argument that is not an option: an option hvdrun does
  // not know would otherwise become the command (and reach mpirun as one of its own).
  if (cmd[0].size() > 1 && cmd[0][0] == '-')
    return bad("unknown option '" + cmd[0] + "' (hvdrun --help lists its options; mpirun's go in --mpi-args)");
  if (o.np < 1) return bad("-np must be at least 1 (got " + std::to_string(o.np) + ")");
  if (!o.hosts.empty() && !o.hostfile.empty()) return bad("-H/--hosts and --hostfile are exclusive");
  if (!o.hostfile.empty() && !std::ifstream(o.hostfile))
    return bad("--hostfile: cannot read '" + o.hostfile + "'");
  std::string knob_error = hb::collect_knobs(app, k, &o);
  if (!knob_error.empty()) return bad(knob_error);
  hb::export_knob_env(o);
  if (!(start_timeout > 0) || start_timeout > 1e6)
    return bad("--start-timeout must be a positive number of seconds (got " + hb::fmt_number(start_timeout) + ")");
  if (!el.discovery_script.empty()) return run_elastic(el, o, app, cmd);
  for (const char* f : {"--min-np", "--max-np", "--elastic-timeout", "--reset-limit", "--blacklist-cooldown-range",
                        "--slots-per-host"})
    if (app.count(f)) return bad(std::string(f) + " is for elastic mode: give --host-discovery-script too");
  if (tcp) {
    if (!o.hostfile.empty()) return bad("--hostfile is for mpirun; with --tcp give -H host:slots,...");
    if (!o.mpi_args.empty()) return bad("--mpi-args is for mpirun; --tcp runs without MPI");
    return hb::run_tcp_job(o, cmd, start_timeout);
  }
  if (std::string hosts = hb::check_hosts(o); !hosts.empty()) return bad(hosts);
  if (!rank_status_dir.empty()) return hb::run_rank_recording_status(rank_status_dir, cmd);
  const bool here_alone = o.np == 1 && o.hosts.empty() && o.hostfile.empty();
  if (hb::mpi_world_size_from_env() > 0 || here_alone)
    return hb::exec_command(cmd, "hvdrun", "");
  // Every rank on this host: each runs through hvdrun, which records its exit status, so a
  // failed rank is not lost when mpirun exits 0 (--enable-recovery).
  if (o.hosts.empty() && o.hostfile.empty()) {
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char dir[] = "/tmp/hvdrun-status-XXXXXX";
    if (n > 0 && mkdtemp(dir) != nullptr) {
      self[n] = '\0';
      std::vector<std::string> wrapped = {"--rank-status-dir", dir};
      wrapped.insert(wrapped.end(), cmd.begin(), cmd.end());
      return hb::run_mpirun_with_statuses(hb::mpirun_command(o, self, wrapped, geteuid() == 0, hb::host_cores()),
                                          dir, o.np);
    }
  }
  std::vector<std::string> rest(cmd.begin() + 1, cmd.end());
  std::vector<std::string> launch = hb::mpirun_command(o, cmd[0], rest, geteuid() == 0, hb::host_cores());
  return hb::exec_command(launch, "hvdrun",
                          "to start " + std::to_string(o.np) +
                              " ranks (install Open MPI, set HVDBENCH_MPIRUN, or run under mpirun)");
}

namespace {

int run_elastic(hb::ElasticOptions el, const hb::Options& o, CLI::App& app, const std::vector<std::string>& cmd) {
  if (!o.hosts.empty() || !o.hostfile.empty())
    return bad("-H/--hostfile name fixed hosts; in elastic mode --host-discovery-script names them");
  if (!o.mpi_args.empty()) return bad("--mpi-args is for mpirun; elastic mode runs over TCP, without MPI");
  el.np = o.np;
  if (!app.count("--min-np")) el.min_np = o.np;
  const std::string why = hb::check_elastic_options(el);
  if (!why.empty()) return bad(why);
  return hb::run_elastic_job(el, cmd);
}

}  // namespace
