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
// exit 2; a CMD that cannot be run: one line, exit 127 (as a shell).
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <sstream>

#include "hvdrun_args.h"
#include "launcher.h"
#include "rank_status.h"
#include "tcp_launch.h"

namespace hb = hvd::bench;

namespace {

int bad(const std::string& msg) {
  std::cerr << "hvdrun: " << msg << "\n";
  return hb::kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  hb::HvdrunPlan p = hb::plan_hvdrun(argc, argv);
  using Mode = hb::HvdrunPlan::Mode;
  if (p.mode == Mode::kExit) {
    if (p.exit_code == hb::kExitBadInput) return bad(p.message);
    std::cout << p.out;
    return p.exit_code;
  }
  const hb::Options& o = p.o;
  const std::vector<std::string>& cmd = p.cmd;
  hb::export_knob_env(o);
  if (p.mode == Mode::kElastic) return hb::run_elastic_job(p.elastic, cmd);
  if (p.mode == Mode::kRankStatus) return hb::run_rank_recording_status(p.rank_status_dir, cmd);
  std::vector<hb::RankPlace> places;
  if (std::string hosts =
          p.mode == Mode::kTcp ? hb::place_ranks(o.np, o.hosts, &places) : hb::check_hosts(o);
      !hosts.empty())
    return bad(hosts);
  // A CMD that cannot run here, where every rank runs here: one line and a shell's 127
  // before anything starts (not one line per rank, nor mpirun's banner around it).
  bool all_here = o.hostfile.empty();
  std::istringstream host_items(o.hosts);
  for (std::string item; std::getline(host_items, item, ',');)
    all_here = all_here && hb::is_this_host(item.substr(0, item.rfind(':')));
  if (all_here) {
    if (std::string why = hb::check_command(cmd[0]); !why.empty()) {
      std::cerr << "hvdrun: " << why << "\n";
      return hb::kExitCannotRun;
    }
  }
  if (p.mode == Mode::kTcp) return hb::run_tcp_job(o, cmd, p.start_timeout_s);
  const bool here_alone = o.np == 1 && o.hosts.empty() && o.hostfile.empty();
  if (hb::mpi_world_size_from_env() > 0 || here_alone) {
    hb::exec_command(cmd, "hvdrun", "");  // returns only when CMD could not be run
    return hb::kExitCannotRun;
  }
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

