#include "launcher.h"

#include <netdb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "tcp_launch.h"

extern char** environ;

namespace hvd::bench {

int mpi_world_size_from_env() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"}) {
    const char* s = std::getenv(v);
    if (s && *s) return std::atoi(s);
  }
  return 0;
}

int host_cores() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

LaunchMode decide_launch(const Options& o) {
  if (mpi_world_size_from_env() > 0) return LaunchMode::kMpiWorld;
  // Collective mode needs MPI even for one rank (the MPI baseline): a singleton MPI job.
  if (!o.collective.empty() && o.np == 1 && o.hosts.empty() && o.hostfile.empty())
    return LaunchMode::kMpiWorld;
  if (o.np == 1 && o.hosts.empty() && o.hostfile.empty()) return LaunchMode::kInProcess;
  return LaunchMode::kSelfLaunch;
}

std::vector<std::string> mpirun_command(const Options& o, const std::string& self,
                                        const std::vector<std::string>& args, bool as_root,
                                        int cores) {
  const char* mpirun = std::getenv("HVDBENCH_MPIRUN");
  std::vector<std::string> cmd = {mpirun && *mpirun ? mpirun : "mpirun", "-np",
                                  std::to_string(o.np)};
  if (as_root) cmd.push_back("--allow-run-as-root");
  if (!o.hosts.empty()) {
    cmd.insert(cmd.end(), {"-H", o.hosts});
  } else if (!o.hostfile.empty()) {
    cmd.insert(cmd.end(), {"--hostfile", o.hostfile});
  } else {
    // This host only. No "-H localhost:N": with slots = cores Open MPI knows when it is
    // oversubscribed and lets idle ranks yield the cores their peers need.
    if (o.np > cores) cmd.push_back("--oversubscribe");
    // Open MPI spins in every wait unless it knows the cores are shared. On one host they
    // often are (more ranks than cores, other work, each rank's background thread): then a
    // spinning rank holds the core its peer needs and every message waits for a scheduler
    // tick (8-16 ms per call measured on a busy 2-core host). Yielding costs ~nothing on an
    // idle core, so ranks on this host always yield when idle.
    cmd.insert(cmd.end(), {"--mca", "mpi_yield_when_idle", "1"});
  }
  cmd.insert(cmd.end(), {"--bind-to", "none"});
  std::istringstream extra(o.mpi_args);
  for (std::string w; extra >> w;) cmd.push_back(w);
  // Forward the environment to the ranks. Local ranks inherit it; with other hosts
  // (-H/--hostfile) every exportable variable goes, as horovodrun forwards it (PYTHONPATH,
  // PATH, NCCL_* ...), except MPI's own; here the knobs and the marker suffice.
  const bool remote = !o.hosts.empty() || !o.hostfile.empty();
  auto exportable = [](const std::string& name) {
    if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
    for (char ch : name)
      if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')) return false;
    for (const char* own : {"OMPI_", "PMIX_", "OPAL_", "BASH_FUNC_"})
      if (name.rfind(own, 0) == 0) return false;
    return name != "_";
  };
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    std::string name = kv.substr(0, kv.find('='));
    const bool knob = name.rfind("HVD_", 0) == 0 || name.rfind("HOROVOD_", 0) == 0 || name == kLaunchedMarker;
    if (knob || (remote && exportable(name))) cmd.insert(cmd.end(), {"-x", name});
  }
  cmd.push_back(self);
  cmd.insert(cmd.end(), args.begin(), args.end());
  return cmd;
}

void export_knob_env(const Options& o) {
  for (const auto& [name, value] : o.knob_env) setenv(name.c_str(), value.c_str(), 1);
  // Collective mode measures per-operation latency: a 1 ms cycle would dominate small sizes.
  if (!o.collective.empty() && !std::getenv("HVD_CYCLE_TIME") &&
      !std::getenv("HOROVOD_CYCLE_TIME"))
    setenv("HVD_CYCLE_TIME", "0", 1);  // event-driven loop: a call starts a cycle at once
}

namespace {

// "" when every host of `hosts` (other than this one) resolves, else the line naming `flag`.
std::string check_resolve(const std::vector<std::string>& hosts, const std::string& flag) {
  std::vector<std::string> checked;
  for (const std::string& host : hosts) {
    if (std::find(checked.begin(), checked.end(), host) != checked.end() || is_this_host(host))
      continue;
    checked.push_back(host);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
    if (found) freeaddrinfo(found);
    if (rc != 0)
      return flag + ": host '" + host.substr(0, 80) + "' does not resolve (" + gai_strerror(rc) +
             ")";
  }
  return "";
}

// An Open MPI hostfile: "host [slots=N] [max_slots=M] ..." lines, '#' comments. Checked as
// -H is: at least one host, slot counts >= 1, -np within the slots when every line gives
// them (without slots=, Open MPI counts the host's cores, which only it knows), names that
// resolve. Keywords other than the slot counts are left to mpirun.
std::string check_hostfile(const Options& o) {
  std::ifstream in(o.hostfile);
  if (!in) return "--hostfile: cannot read '" + o.hostfile + "'";
  const std::string where = "--hostfile " + o.hostfile.substr(0, 200);
  std::vector<std::string> hosts;
  long total = 0;
  bool all_counted = true;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string host;
    if (!(words >> host)) continue;
    const std::string at = where + ":" + std::to_string(n);
    if (host.find('=') != std::string::npos)
      return at + ": '" + host.substr(0, 80) + "' is not a host name";
    host = host.substr(host.find('@') + 1);  // user@host
    if (host.empty()) return at + ": empty host name";
    bool counted = false;
    for (std::string w; words >> w;) {
      const size_t eq = w.find('=');
      const std::string key = w.substr(0, eq);
      const bool slots =
          key == "slots" || key == "slot" || key == "count" || key == "cpu" || key == "cpus";
      const bool max_slots =
          key == "max_slots" || key == "max-slots" || key == "slots_max" || key == "slots-max";
      if (!slots && !max_slots) continue;
      char* end = nullptr;
      const char* v = eq == std::string::npos ? "" : w.c_str() + eq + 1;
      const long count = std::strtol(v, &end, 10);
      if (!*v || *end || count < 1 || count > 1000000)
        return at + ": bad slot count in '" + w.substr(0, 80) + "' (" + key + "=N, N >= 1)";
      if (slots) {
        total += count;
        counted = true;
      }
    }
    all_counted = all_counted && counted;
    hosts.push_back(host);
  }
  if (hosts.empty()) return where + " names no hosts";
  if (all_counted && total < o.np && o.mpi_args.find("oversubscribe") == std::string::npos)
    return "-np " + std::to_string(o.np) + " is more than the " + std::to_string(total) +
           " slots of " + where;
  return check_resolve(hosts, "--hostfile");
}

}  // namespace

std::string check_hosts(const Options& o) {
  if (!o.hostfile.empty()) return check_hostfile(o);
  if (o.hosts.empty()) return "";
  std::vector<RankPlace> places;
  if (std::string bad = place_ranks(o.np, o.hosts, &places); !bad.empty()) return bad;
  std::vector<std::string> hosts;
  for (const RankPlace& p : places) hosts.push_back(p.host);
  return check_resolve(hosts, "-H");
}

std::string check_command(const std::string& cmd) {
  auto runnable = [](const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return errno;
    if (S_ISDIR(st.st_mode)) return EISDIR;
    return ::access(path.c_str(), X_OK) == 0 ? 0 : errno;
  };
  int err = ENOENT;
  if (cmd.find('/') != std::string::npos) {
    err = runnable(cmd);
  } else if (!cmd.empty()) {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
    for (std::string d; std::getline(dirs, d, ':');) {
      const int e = runnable((d.empty() ? "." : d) + "/" + cmd);
      if (e == 0) return "";
      if (e != ENOENT && e != ENOTDIR)
        err = e;  // as execvp: a found but unusable file is what to report
    }
  }
  if (err == 0) return "";
  return "cannot run '" + cmd.substr(0, 200) + "': " +
         (err == ENOENT && cmd.find('/') == std::string::npos ? "command not found"
                                                              : std::strerror(err));
}

int exec_mpirun(const Options& o, int argc, const char* const* argv) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    std::cerr << "hvdbench: cannot find its own executable (/proc/self/exe): "
              << std::strerror(errno) << "\n";
    return kExitRuntimeFailure;
  }
  self[n] = '\0';
  setenv(kLaunchedMarker, "1", 1);
  std::vector<std::string> args(argv + 1, argv + argc);
  std::vector<std::string> cmd = mpirun_command(o, self, args, geteuid() == 0, host_cores());
  return exec_command(cmd, "hvdbench",
                      "to start " + std::to_string(o.np) +
                          " ranks (install Open MPI, set HVDBENCH_MPIRUN, or run under mpirun)");
}

int exec_command(const std::vector<std::string>& cmd, const std::string& tool, const std::string& why) {
  if (std::getenv("HVDBENCH_SHOW_LAUNCH")) {
    std::cerr << tool << ": launching:";
    for (const auto& c : cmd) std::cerr << ' ' << c;
    std::cerr << "\n";
  }
  std::vector<std::string> words = cmd;
  std::vector<char*> cargv;
  for (auto& c : words) cargv.push_back(c.data());
  cargv.push_back(nullptr);
  std::cout.flush();
  execvp(cargv[0], cargv.data());
  std::cerr << tool << ": cannot run '" << cmd[0] << "'" << (why.empty() ? "" : " " + why) << ": "
            << std::strerror(errno) << "\n";
  return kExitRuntimeFailure;
}

}  // namespace hvd::bench
