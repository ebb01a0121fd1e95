#include "rank_status.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace hvd::bench {
namespace {

volatile sig_atomic_t g_child = 0;

void forward(int sig) {
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), sig);
}

// Starts `cmd` (PATH lookup) as a child with SIGINT/SIGTERM/SIGHUP passed on to it; -1 when
// fork fails. The child's exec failure is exit code 127 with one line, as a shell's.
pid_t spawn(const std::vector<std::string>& cmd, const char* tool) {
  std::vector<std::string> words = cmd;
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::cout.flush();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "%s: cannot run '%s': %s\n", tool, argv[0], std::strerror(errno));
    ::_exit(127);
  }
  if (pid > 0) {
    g_child = pid;
    struct sigaction sa {};
    sa.sa_handler = forward;
    ::sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  }
  return pid;
}

// The exit code of `pid` as a shell reports it (128 + signal when killed).
int wait_code(pid_t pid) {
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) return 1;
  }
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return 1;
}

}  // namespace

int run_rank_recording_status(const std::string& dir, const std::vector<std::string>& cmd) {
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  const pid_t pid = spawn(cmd, "hvdrun");
  const int code = pid < 0 ? 1 : wait_code(pid);
  if (rank != nullptr) std::ofstream(dir + "/rank." + rank) << code << "\n";
  return code;
}

int run_mpirun_with_statuses(const std::vector<std::string>& mpirun_cmd, const std::string& dir, int np) {
  if (std::getenv("HVDBENCH_SHOW_LAUNCH")) {
    std::cerr << "hvdrun: launching:";
    for (const auto& c : mpirun_cmd) std::cerr << ' ' << c;
    std::cerr << "\n";
  }
  const pid_t pid = spawn(mpirun_cmd, "hvdrun");
  if (pid < 0) {
    std::cerr << "hvdrun: cannot start mpirun: " << std::strerror(errno) << "\n";
    return 1;
  }
  int code = wait_code(pid);
  std::error_code ec;
  if (code == 127 && std::filesystem::is_empty(dir, ec)) {  // no rank ever started
    std::cerr << "hvdrun: mpirun could not be run (install Open MPI, set HVDBENCH_MPIRUN, or run under mpirun)\n";
    code = 1;
  }
  for (int r = 0; code == 0 && r < np; ++r) {
    std::ifstream in(dir + "/rank." + std::to_string(r));
    int rc = 0;
    if (!(in >> rc)) {
      std::cerr << "hvdrun: rank " << r << " left no exit status (it was killed); mpirun returned 0\n";
      code = 1;
    } else if (rc != 0) {
      std::cerr << "hvdrun: rank " << r << " exited with code " << rc << "; mpirun returned 0\n";
      code = rc;
    }
  }
  std::filesystem::remove_all(dir, ec);
  return code;
}

}  // namespace hvd::bench
