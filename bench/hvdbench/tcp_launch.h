// hvdrun --tcp (horovodrun --gloo): starts the ranks itself, without MPI. It runs the
// rendezvous server (hvd/tcp.h), gives every rank its HVD_* variables, starts the ranks of
// this host as child processes and those of other hosts through ssh, and waits for them:
// the first rank that fails stops the others, and its exit code is hvdrun's.
#pragma once

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
/// Runs `cmd` on o.np ranks over TCP; returns hvdrun's exit code.
int run_tcp_job(const Options& o, const std::vector<std::string>& cmd, double start_timeout_s);

}  // namespace hvd::bench
