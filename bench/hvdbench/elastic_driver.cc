#include "elastic_driver.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <thread>

#include "hvd/tcp.h"
#include "options.h"
#include "tcp_launch.h"

namespace hvd::bench {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string fmt(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

struct Worker {
  int id = 0;
  std::string host;
  int slot = 0;
  bool stopping = false;  // hvdrun stopped it (its host left discovery): not a failure
  bool hung = false;      // hvdrun killed it: it did not come to a reset point with the others
};

// How long the workers of a generation may take to come to the reset point after the first
// of them did, before the missing ones count as hung: the stall shutdown time (by which a
// healthy worker has given up on a silent peer), at least 10 s.
double hang_grace_s() {
  for (const char* name : {"HVD_STALL_SHUTDOWN_TIME_SECONDS", "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS"}) {
    const char* v = std::getenv(name);
    if (v && *v) return std::max(10.0, std::strtod(v, nullptr));
  }
  return 10;
}

// A host's failures and blacklist (horovodrun's HostState with --blacklist-cooldown-range).
struct HostState {
  int failures = 0;
  double blocked_until = 0;
};

// A host name ssh and the resolver can take: letters, digits, '.', '-', '_' (and ':' of an
// IPv6 address), not starting with '-' (ssh would read an option).
bool plausible_host(const std::string& h) {
  if (h.empty() || h.size() > 255 || h[0] == '-') return false;
  return std::all_of(h.begin(), h.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == ':';
  });
}

// Runs the discovery script: "host:slots" or "host" lines. "" or why it failed.
std::string discover(const std::string& script, int default_slots, std::vector<std::pair<std::string, int>>* out) {
  FILE* f = ::popen(script.c_str(), "r");
  if (!f) return "cannot be started";
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  const int st = ::pclose(f);
  if (st == -1 || exit_code_of(st) != 0) return "exited with code " + std::to_string(st == -1 ? -1 : exit_code_of(st));
  out->clear();
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    line.erase(0, line.find_first_not_of(" \t\r"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty()) continue;
    const size_t colon = line.rfind(':');
    int slots = default_slots;
    if (colon != std::string::npos) {
      char* end = nullptr;
      const long v = std::strtol(line.c_str() + colon + 1, &end, 10);
      if (*end || v < 0 || colon == 0) return "printed '" + line + "' (want host:slots)";
      slots = static_cast<int>(v);
    }
    if (!plausible_host(line.substr(0, colon)))
      return "printed '" + line +
             "' (want host:slots; a host name has letters, digits, '.', '-', '_')";
    out->emplace_back(line.substr(0, colon), slots);
  }
  return "";
}

class Driver {
 public:
  Driver(const ElasticOptions& e, std::vector<std::string> cmd) : e_(e), cmd_(std::move(cmd)), t0_(now_s()) {}
  int run();

 private:
  void log(const std::string& what) {
    std::cout << "hvdrun: elastic: +" << std::fixed << std::setprecision(2) << now_s() - t0_ << " s: " << what
              << std::endl;
  }
  int fail(const std::string& why) {
    std::cerr << "hvdrun: elastic: " << why << std::endl;
    return stop_all(kExitRuntimeFailure);
  }
  void poll_discovery();
  void reap();
  void stop_unoffered();
  void start_workers();
  int decide();
  void publish();
  int stop_all(int code);
  void blacklist(const std::string& host);
  void check_resets();

  ElasticOptions e_;
  std::vector<std::string> cmd_;
  double t0_;
  std::unique_ptr<RendezvousServer> server_;
  std::string key_, addr_;
  std::map<pid_t, Worker> alive_;
  std::vector<std::pair<std::string, int>> offered_;
  bool discovered_ = false;
  std::map<std::string, HostState> hosts_;
  std::mt19937 rng_{std::random_device{}()};
  int next_id_ = 0, resets_ = 0;
  int64_t gen_ = 0;
  bool changed_ = true, finishing_ = false;
  int failed_in_gen_ = 0, last_fail_code_ = 0, finish_code_ = 0;
  double below_since_ = -1;
  std::vector<int> members_;     // worker ids of generation gen_, in rank order
  double first_reset_at_ = -1;   // when the first of them came to the reset point
};

void Driver::poll_discovery() {
  std::vector<std::pair<std::string, int>> hosts;
  const std::string bad = discover(e_.discovery_script, e_.slots_per_host, &hosts);
  if (!bad.empty()) {
    log("discovery script '" + e_.discovery_script + "' " + bad + "; keeping the hosts it offered before");
    return;
  }
  if (!discovered_ || hosts != offered_) {
    std::string list;
    for (const auto& [h, n] : hosts) list += (list.empty() ? "" : ",") + h + ":" + std::to_string(n);
    log("discovery offers " + (list.empty() ? std::string("no hosts") : list));
  }
  offered_ = hosts;
  discovered_ = true;
}

void Driver::blacklist(const std::string& host) {
  if (e_.cooldown.empty()) return;  // the slot is offered again at the next discovery
  HostState& h = hosts_[host];
  ++h.failures;
  // horovodrun's cooldown: lower * 2^failures + U(0, 1) * lower, at most upper.
  const double lo = e_.cooldown[0], hi = e_.cooldown[1];
  const double delay = std::min(hi, lo * std::pow(2.0, std::min(h.failures, 30)) +
                                        std::uniform_real_distribution<double>(0, 1)(rng_) * lo);
  h.blocked_until = now_s() + delay;
  log("blacklisting host " + host + " for " + fmt(std::round(delay * 10) / 10) + " s (failure " +
      std::to_string(h.failures) + ")");
}

void Driver::reap() {
  for (auto it = alive_.begin(); it != alive_.end();) {
    int st = 0;
    if (::waitpid(it->first, &st, WNOHANG) != it->first) {
      ++it;
      continue;
    }
    const Worker w = it->second;
    it = alive_.erase(it);
    const int code = exit_code_of(st);
    const std::string who = "worker " + std::to_string(w.id) + " (" + w.host + " slot " + std::to_string(w.slot) + ")";
    // From the wait status, not the code: a worker that exits 255 (ssh's failure) or 130
    // was not killed by a signal.
    const std::string how = WIFSIGNALED(st) ? "was killed by signal " + std::to_string(WTERMSIG(st))
                                            : "exited with code " + std::to_string(code);
    if (code == 0 || finishing_) {
      if (code != 0 && finish_code_ == 0) finish_code_ = code;
      if (!finishing_) log(who + " finished; waiting for the others");
      else if (code != 0) log(who + " " + how + " while the job was finishing");
      finishing_ = true;
      continue;
    }
    log(who + " " + how + (w.stopping ? " (stopped: its slot left discovery)" : w.hung ? " (it hung)" : ""));
    changed_ = true;
    if (!w.stopping) {
      ++failed_in_gen_;
      last_fail_code_ = code;
      blacklist(w.host);
    }
  }
}

void Driver::stop_unoffered() {
  for (auto& [pid, w] : alive_) {
    const std::string& host = w.host;  // a named reference: lambdas capture no structured binding (clang < 16)
    auto h = std::find_if(offered_.begin(), offered_.end(), [&](const auto& o) { return o.first == host; });
    if (w.stopping || (h != offered_.end() && w.slot < h->second)) continue;
    log("stopping worker " + std::to_string(w.id) + ": " + w.host + " slot " + std::to_string(w.slot) +
        " is no longer offered by discovery");
    ::kill(pid, SIGTERM);
    w.stopping = true;
  }
}

void Driver::start_workers() {
  int limit = gen_ == 0 ? e_.np : INT_MAX;
  if (e_.max_np > 0) limit = std::min(limit, e_.max_np);
  const double now = now_s();
  for (const auto& offer : offered_) {
    const std::string& host = offer.first;  // not a structured binding: the lambda below captures it
    const int slots = offer.second;
    if (hosts_[host].blocked_until > now) continue;
    for (int slot = 0; slot < slots && static_cast<int>(alive_.size()) < limit; ++slot) {
      const bool taken = std::any_of(alive_.begin(), alive_.end(),
                                     [&](const auto& a) { return a.second.host == host && a.second.slot == slot; });
      if (taken) continue;
      const int id = next_id_++;
      std::map<std::string, std::string> env = {
          {"HVD_CONTROLLER", "tcp"}, {"HVD_ELASTIC_WORKER", std::to_string(id)}, {"HVD_HOSTNAME", host},
          {"HVD_LOCAL_RANK", std::to_string(slot)}, {"HVD_RENDEZVOUS_ADDR", addr_},
          {"HVD_RENDEZVOUS_PORT", std::to_string(server_->port())}, {"HVD_RENDEZVOUS_KEY", key_},
          {"HVD_START_TIMEOUT", fmt(e_.elastic_timeout_s)}};
      const char* own_addr = std::getenv("HVD_TCP_ADDR");
      if (addr_ == "127.0.0.1" && is_this_host(host) && !(own_addr && *own_addr)) env["HVD_TCP_ADDR"] = "127.0.0.1";
      const pid_t pid = is_this_host(host) ? spawn(cmd_, env) : spawn(ssh_command(host, cmd_, env), {});
      if (pid < 0) {
        log("cannot start a worker on " + host + ": " + std::strerror(errno));
        return;
      }
      alive_[pid] = Worker{id, host, slot, false};
      log("started worker " + std::to_string(id) + " on " + host + " slot " + std::to_string(slot));
      changed_ = true;
    }
  }
}

// Publishes the live workers as the next generation, ranked by age (the oldest is rank 0,
// so rank 0 always holds trained state when the workers sync).
void Driver::publish() {
  std::map<int, const Worker*> by_id;
  for (const auto& [pid, w] : alive_) by_id[w.id] = &w;
  std::string assign, ids;
  members_.clear();
  first_reset_at_ = -1;
  for (const auto& [id, w] : by_id) {
    members_.push_back(id);
    assign.append(std::to_string(id)).append(" ").append(w->host).append("\n");
    if (!ids.empty()) ids.append(",");
    ids.append(std::to_string(id));
  }
  ++gen_;
  server_->put("elastic/" + std::to_string(gen_) + "/assign", assign);
  server_->put("elastic/gen", std::to_string(gen_));
  log("generation " + std::to_string(gen_) + ": size " + std::to_string(by_id.size()) + " (workers " + ids + ")");
  changed_ = false;
  failed_in_gen_ = 0;
}

// A worker that leaves generation g at its reset point stores "elastic/left/<id>" = g
// (join_elastic_tcp_world). When every live member of the current generation has left it,
// the next generation is published (a reset without a change of workers). When some have
// and others have not within hang_grace_s(), the missing ones hang (alive but silent, e.g.
// SIGSTOPped): each is killed, and reap() then removes and blacklists it like a dead one.
void Driver::check_resets() {
  if (gen_ == 0 || finishing_ || changed_) return;
  std::vector<int> left, missing;
  for (int id : members_) {
    std::string v;
    const bool gone = server_->get("elastic/left/" + std::to_string(id), &v) && v == std::to_string(gen_);
    (gone ? left : missing).push_back(id);
  }
  if (left.empty()) return;
  if (first_reset_at_ < 0) {
    first_reset_at_ = now_s();
    log("worker " + std::to_string(left.front()) + " came to the reset point of generation " + std::to_string(gen_));
  }
  if (missing.empty()) {
    log("every worker of generation " + std::to_string(gen_) + " came to the reset point; publishing the next");
    changed_ = true;
    return;
  }
  const double grace = hang_grace_s();
  if (now_s() - first_reset_at_ < grace) return;
  for (auto& [pid, w] : alive_) {
    if (w.hung || w.stopping || std::find(missing.begin(), missing.end(), w.id) == missing.end()) continue;
    log("worker " + std::to_string(w.id) + " (" + w.host + " slot " + std::to_string(w.slot) +
        ") did not come to the reset point within " + fmt(grace) + " s of the others: it hangs; killing it");
    ::kill(pid, SIGKILL);
    w.hung = true;
  }
}

// After the changes of one round: publish, wait, or stop. -1: go on; else hvdrun's exit code.
int Driver::decide() {
  if (finishing_) return alive_.empty() ? finish_code_ : -1;
  if (gen_ > 0 && alive_.empty() && failed_in_gen_ > 0)
    return fail("every worker of generation " + std::to_string(gen_) + " failed; stopping (last exit code " +
                std::to_string(last_fail_code_) + ")");
  if (!changed_) return -1;
  const int live = static_cast<int>(alive_.size());
  if (live < std::max(1, e_.min_np)) {
    if (below_since_ < 0) below_since_ = now_s();
    if (now_s() - below_since_ > e_.elastic_timeout_s)
      return fail("only " + std::to_string(live) + " worker(s) for " + fmt(e_.elastic_timeout_s) +
                  " s (--elastic-timeout), fewer than --min-np " + std::to_string(e_.min_np) + "; stopping");
    return -1;
  }
  below_since_ = -1;
  if (gen_ > 0) {
    if (e_.reset_limit >= 0 && resets_ >= e_.reset_limit)
      return fail("the job has been reset " + std::to_string(resets_) + " time(s) and the workers changed again, "
                  "exceeding --reset-limit " + std::to_string(e_.reset_limit) + "; stopping");
    ++resets_;
  }
  publish();
  return -1;
}

int Driver::stop_all(int code) {
  for (const auto& [pid, w] : alive_) ::kill(pid, SIGTERM);
  const double kill_at = now_s() + 5;
  while (!alive_.empty()) {
    for (auto it = alive_.begin(); it != alive_.end();) {
      int st = 0;
      it = ::waitpid(it->first, &st, WNOHANG) == it->first ? alive_.erase(it) : std::next(it);
    }
    if (now_s() > kill_at)
      for (const auto& [pid, w] : alive_) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return code;
}

int Driver::run() {
  key_ = random_key();
  const char* forced = std::getenv("HVDRUN_RENDEZVOUS_ADDR");  // where other hosts reach us
  char name[256] = {};
  (void)::gethostname(name, sizeof name - 1);
  double next_discovery = 0;
  for (;;) {
    reap();
    if (!finishing_ && now_s() >= next_discovery) {
      poll_discovery();
      next_discovery = now_s() + 1;  // horovodrun polls once a second
      if (addr_.empty() && discovered_) {
        bool all_here = true;
        for (const auto& [h, n] : offered_) all_here = all_here && is_this_host(h);
        addr_ = forced && *forced ? forced : all_here ? "127.0.0.1" : name;
        // The server listens on the address the workers are given, not on every interface.
        Status s = RendezvousServer::start(key_, 0, &server_, addr_);
        if (!s.ok()) {
          std::cerr << "hvdrun: cannot start the rendezvous server: " << s.message() << "\n";
          return stop_all(kExitRuntimeFailure);
        }
      }
      if (discovered_) {
        stop_unoffered();
        start_workers();
      }
    }
    check_resets();
    const int code = decide();
    if (code >= 0) return code;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

std::string check_elastic_options(const ElasticOptions& e) {
  if (e.discovery_script.empty()) return "elastic mode needs --host-discovery-script";
  if (e.min_np < 1) return "--min-np must be at least 1 (got " + std::to_string(e.min_np) + ")";
  if (e.min_np > e.np) return "--min-np " + std::to_string(e.min_np) + " is more than -np " + std::to_string(e.np);
  if (e.max_np != 0 && e.max_np < e.np)
    return "--max-np " + std::to_string(e.max_np) + " is less than -np " + std::to_string(e.np);
  if (e.slots_per_host < 1) return "--slots-per-host must be at least 1";
  if (!(e.elastic_timeout_s > 0) || e.elastic_timeout_s > 1e6)
    return "--elastic-timeout must be a positive number of seconds (got " + fmt(e.elastic_timeout_s) + ")";
  if (e.reset_limit < -1) return "--reset-limit must be 0 or more";
  if (!e.cooldown.empty() && (e.cooldown.size() != 2 || !(e.cooldown[0] > 0) || e.cooldown[1] < e.cooldown[0]))
    return "--blacklist-cooldown-range takes two seconds MIN MAX with 0 < MIN <= MAX";
  return "";
}

int run_elastic_job(const ElasticOptions& e, const std::vector<std::string>& cmd) {
  ::signal(SIGPIPE, SIG_IGN);
  return Driver(e, cmd).run();
}

}  // namespace hvd::bench
