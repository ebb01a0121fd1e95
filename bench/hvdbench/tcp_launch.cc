#include "tcp_launch.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "hvd/tcp.h"

extern char** environ;

namespace hvd::bench {

std::string random_key() {
  unsigned char b[16] = {};
  const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    (void)!::read(fd, b, sizeof b);
    ::close(fd);
  }
  std::string k;
  const char* hex = "0123456789abcdef";
  for (unsigned char c : b) k += {hex[c >> 4], hex[c & 15]};
  return k + std::to_string(::getpid());
}

namespace {

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string host_name() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? buf : "localhost";
}

// The variables rank r gets on top of hvdrun's environment.
std::map<std::string, std::string> rank_env(int r, int np, const RankPlace& p, const std::string& addr, int port,
                                            const std::string& key, double start_timeout_s) {
  std::ostringstream t;
  t << start_timeout_s;
  return {{"HVD_CONTROLLER", "tcp"},          {"HVD_RANK", std::to_string(r)},
          {"HVD_SIZE", std::to_string(np)},   {"HVD_LOCAL_RANK", std::to_string(p.local_rank)},
          {"HVD_LOCAL_SIZE", std::to_string(p.local_size)},
          {"HVD_CROSS_RANK", std::to_string(p.cross_rank)},
          {"HVD_CROSS_SIZE", std::to_string(p.cross_size)},
          {"HVD_HOSTNAME", p.host},           {"HVD_RENDEZVOUS_ADDR", addr},
          {"HVD_RENDEZVOUS_PORT", std::to_string(port)},
          {"HVD_RENDEZVOUS_KEY", key},        {"HVD_START_TIMEOUT", t.str()}};
}

}  // namespace

std::vector<std::string> ssh_command(const std::string& host, const std::vector<std::string>& cmd,
                                     std::map<std::string, std::string> env) {
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e, name = kv.substr(0, kv.find('='));
    const bool ours = name.rfind("HVD_", 0) == 0 || name.rfind("HOROVOD_", 0) == 0 || name == "PATH" ||
                      name == "PYTHONPATH" || name == "LD_LIBRARY_PATH";
    if (ours && !env.count(name)) env[name] = kv.substr(name.size() + 1);
  }
  char cwd[4096] = {};
  std::string line = "cd " + quote(getcwd(cwd, sizeof cwd - 1) ? cwd : ".") + " && env";
  for (const auto& [k, v] : env) line.append(" ").append(k).append("=").append(quote(v));
  for (const std::string& c : cmd) line.append(" ").append(quote(c));
  const char* ssh = std::getenv("HVDRUN_SSH");
  std::istringstream words(ssh && *ssh ? ssh : "ssh -o BatchMode=yes -o StrictHostKeyChecking=no");
  std::vector<std::string> out;
  for (std::string w; words >> w;) out.push_back(w);
  out.push_back(host);
  out.push_back(line);
  return out;
}

pid_t spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  std::vector<std::string> vars, words = argv;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    if (!env.count(kv.substr(0, kv.find('=')))) vars.push_back(kv);
  }
  for (const auto& [k, v] : env) vars.push_back(k + "=" + v);
  std::vector<char*> cargv, cenv;
  for (auto& w : words) cargv.push_back(w.data());
  for (auto& v : vars) cenv.push_back(v.data());
  cargv.push_back(nullptr);
  cenv.push_back(nullptr);
  const std::string fail = "hvdrun: cannot run '" + argv[0] + "': ";
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::execvpe(cargv[0], cargv.data(), cenv.data());
  const char* why = std::strerror(errno);
  (void)!::write(2, fail.data(), fail.size());
  (void)!::write(2, why, std::strlen(why));
  (void)!::write(2, "\n", 1);
  ::_exit(127);
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

namespace {

// After the first failure the others get this long to end on their own (a survivor of a
// lost peer raises an error naming it) before they are stopped.
constexpr double kSurvivorGraceS = 3;

// Waits for every rank. The first to fail stops the rest (after kSurvivorGraceS: SIGTERM,
// SIGKILL 5 s later); its code is returned (0 when all succeed).
int wait_ranks(std::map<pid_t, int> ranks) {
  int first = 0;
  double term_at = -1, kill_at = -1;
  auto now = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
  while (!ranks.empty()) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0 && ranks.count(pid)) {
      const int rank = ranks[pid], code = exit_code_of(status);
      ranks.erase(pid);
      if (code != 0 && first == 0) {
        first = code;
        std::cerr << "hvdrun: rank " << rank << " exited with code " << code
                  << (ranks.empty() ? "" : "; stopping the other ranks") << "\n";
        term_at = now() + kSurvivorGraceS;
      }
      continue;
    }
    if (pid < 0 && errno == ECHILD) break;
    if (term_at > 0 && now() > term_at) {
      for (const auto& [p, r] : ranks) ::kill(p, SIGTERM);
      term_at = -1;
      kill_at = now() + 5;
    }
    if (kill_at > 0 && now() > kill_at) {
      for (const auto& [p, r] : ranks) ::kill(p, SIGKILL);
      kill_at = -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return first;
}

}  // namespace

bool is_this_host(const std::string& host) { return host == "localhost" || host == host_name(); }

std::string place_ranks(int np, const std::string& hosts, std::vector<RankPlace>* out) {
  std::vector<std::pair<std::string, int>> slots;
  std::istringstream in(hosts.empty() ? "localhost:" + std::to_string(np) : hosts);
  for (std::string item; std::getline(in, item, ',');) {
    const size_t colon = item.rfind(':');
    std::string name = item.substr(0, colon);
    int n = 1;
    if (colon != std::string::npos) {
      char* end = nullptr;
      const long v = std::strtol(item.c_str() + colon + 1, &end, 10);
      if (*end || v < 1) return "-H: bad slot count in '" + item + "' (host:slots, slots >= 1)";
      n = static_cast<int>(v);
    }
    if (name.empty()) return "-H: empty host name in '" + hosts + "'";
    slots.emplace_back(name, n);
  }
  out->clear();
  std::vector<int> per_host;
  for (size_t h = 0; h < slots.size() && static_cast<int>(out->size()) < np; ++h) {
    const int take = std::min(slots[h].second, np - static_cast<int>(out->size()));
    for (int i = 0; i < take; ++i) out->push_back(RankPlace{slots[h].first, i, take, static_cast<int>(h), 0});
    per_host.push_back(take);
  }
  if (static_cast<int>(out->size()) < np)
    return "-np " + std::to_string(np) + " is more than the " + std::to_string(out->size()) + " slots of -H " + hosts;
  for (RankPlace& p : *out) p.cross_size = static_cast<int>(per_host.size());
  return "";
}

int run_tcp_job(const Options& o, const std::vector<std::string>& cmd, double start_timeout_s) {
  std::vector<RankPlace> places;
  const std::string bad = place_ranks(o.np, o.hosts, &places);
  if (!bad.empty()) {
    std::cerr << "hvdrun: " << bad << "\n";
    return kExitBadInput;
  }
  bool all_here = true;
  for (const RankPlace& p : places) all_here = all_here && is_this_host(p.host);
  const char* forced = std::getenv("HVDRUN_RENDEZVOUS_ADDR");  // the address other hosts reach us at
  const std::string addr = forced && *forced ? forced : all_here ? "127.0.0.1" : host_name();
  // The server listens on that address only; so do the ranks on theirs (HVD_TCP_ADDR, else
  // their host name): loopback when every rank is on this host.
  const std::string key = random_key();
  std::unique_ptr<RendezvousServer> server;
  Status s = RendezvousServer::start(key, 0, &server, addr);
  if (!s.ok()) {
    std::cerr << "hvdrun: cannot start the rendezvous server: " << s.message()
              << (forced && *forced ? " (HVDRUN_RENDEZVOUS_ADDR)" : "") << "\n";
    return kExitRuntimeFailure;
  }
  const char* own_addr = std::getenv("HVD_TCP_ADDR");
  const bool loopback_ranks = addr == "127.0.0.1" && !(own_addr && *own_addr);
  std::map<pid_t, int> ranks;
  for (int r = 0; r < o.np; ++r) {
    const RankPlace& p = places[static_cast<size_t>(r)];
    auto env = rank_env(r, o.np, p, addr, server->port(), key, start_timeout_s);
    if (loopback_ranks) env["HVD_TCP_ADDR"] = "127.0.0.1";
    const pid_t pid = is_this_host(p.host) ? spawn(cmd, env) : spawn(ssh_command(p.host, cmd, env), {});
    if (pid < 0) {
      std::cerr << "hvdrun: cannot start rank " << r << ": " << std::strerror(errno) << "\n";
      for (const auto& [q, rr] : ranks) ::kill(q, SIGTERM);
      wait_ranks(ranks);
      return kExitRuntimeFailure;
    }
    ranks[pid] = r;
  }
  return wait_ranks(ranks);
}

}  // namespace hvd::bench
