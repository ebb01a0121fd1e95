// hvdrun --tcp (horovodrun --gloo): starts the ranks itself, without MPI. It runs the
// rendezvous server (hvd/tcp.h), gives every rank its HVD_* variables, starts the ranks of
// this host as child processes and those of other hosts through ssh, and waits for them:
// the first rank that fails stops the others, and its exit code is hvdrun's.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "options.h"

namespace hvd::bench {

/// Where the ranks go: `np` ranks over the hosts of -H (host:slots,...), in order, or all
/// on localhost. "" or the error line (bad input).
struct RankPlace {
  std::string host;
  int local_rank = 0, local_size = 0, cross_rank = 0, cross_size = 0;
};
std::string place_ranks(int np, const std::string& hosts, std::vector<RankPlace>* out);
/// True for the names of this machine ("localhost", its host name): ranks there are
/// children of hvdrun; other hosts are reached with ssh (HVDRUN_SSH overrides the command).
bool is_this_host(const std::string& host);
/// A fresh secret for the rendezvous (HVD_RENDEZVOUS_KEY).
std::string random_key();
/// Forks one process: exec's `argv` with `env` added to this environment. Everything is
/// built before fork (the rendezvous server's threads may hold the allocator's lock).
/// Returns the child's pid, or -1.
pid_t spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env);
/// The ssh command line that runs `cmd` on `host` in this directory with `env` and the
/// variables ranks need from here (HVD_*, HOROVOD_*, PATH, PYTHONPATH, LD_LIBRARY_PATH).
std::vector<std::string> ssh_command(const std::string& host, const std::vector<std::string>& cmd,
                                     std::map<std::string, std::string> env);
/// A wait status as an exit code (128 + signal for a killed process).
int exit_code_of(int status);
/// Runs `cmd` on o.np ranks over TCP; returns hvdrun's exit code.
int run_tcp_job(const Options& o, const std::vector<std::string>& cmd, double start_timeout_s);

}  // namespace hvd::bench
