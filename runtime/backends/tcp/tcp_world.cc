// Joining a TCP world: the options from hvdrun's variables, the rendezvous, and the
// connections. Each rank listens on a port of its own, publishes
// "<scope>/rank/<r>" = "<address> <port> <host>" in the store, reads every other rank's,
// connects to the ranks below it and accepts the ranks above it. The listener is bound to
// the address the rank advertises, not to every interface. A connection opens with the
// challenge-response of auth.h (protocol "peer", claim "<rank> <size>": the key never
// crosses the wire); the acceptor refuses a wrong key, a wrong world size or an unexpected
// rank. Every wait ends at the start deadline with an error that names the rank, the
// address and the variable to check.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

#include "backends/tcp/auth.h"
#include "backends/tcp/auth_gate.h"
#include "backends/tcp/rendezvous.h"
#include "backends/tcp/tcp_transport.h"
#include "hvd/tcp.h"

namespace hvd {

namespace {

struct PeerAddr {
  std::string addr;
  int port = 0;
  std::string host;
};

std::string timeout_text(const TcpOptions& o) {
  std::ostringstream s;
  s << o.start_timeout_s;
  return s.str() + " s (HVD_START_TIMEOUT)";
}

// Reads every other rank's address from the store; the missing ones are named.
Status gather_addresses(tcp::RendezvousClient& rv, const TcpOptions& o, double deadline, std::vector<PeerAddr>* out) {
  out->assign(static_cast<size_t>(o.size), PeerAddr{});
  std::vector<int> missing;
  for (int q = 0; q < o.size; ++q) {
    std::string v;
    Status s = rv.get(o.scope + "/rank/" + std::to_string(q), deadline, &v);
    if (s.code() == StatusCode::kTimeout) {
      missing.push_back(q);
      continue;
    }
    HVD_RETURN_IF_ERROR(s);
    PeerAddr& a = (*out)[static_cast<size_t>(q)];
    std::istringstream in(v);
    if (!(in >> a.addr >> a.port >> a.host)) return Status::Internal("rendezvous: malformed entry of rank " + std::to_string(q) + ": '" + v + "'");
  }
  if (missing.empty()) return Status::OK();
  std::string list;
  for (int q : missing) list += (list.empty() ? "" : ", ") + std::to_string(q);
  return Status::Timeout("rank" + std::string(missing.size() > 1 ? "s " : " ") + list +
                         " never reached the rendezvous at " + rv.where() + " within " + timeout_text(o) +
                         " (were all " + std::to_string(o.size) + " ranks started?)");
}

// Connects to lower rank q and proves the key to it (and it to this rank).
Status connect_peer(const TcpOptions& o, int q, const PeerAddr& a, double deadline, tcp::Fd* out) {
  const std::string who = "rank " + std::to_string(q) + " at " + a.addr + ":" + std::to_string(a.port);
  Status s = tcp::connect_until(a.addr, a.port, deadline, out);
  if (!s.ok()) return Status(s.code(), "cannot reach " + who + ": " + s.message());
  s = tcp::authenticate_to(out->get(), o.key, "peer", std::to_string(o.rank) + " " + std::to_string(o.size), deadline);
  if (s.code() == StatusCode::kPrecondition)
    return Status::Precondition(who + " refused the connection: " + s.message() +
                                (s.message() == "wrong key" ? " (HVD_RENDEZVOUS_KEY differs from the job's)" : ""));
  if (!s.ok()) return Status(s.code(), who + " did not answer: " + s.message());
  return Status::OK();
}

// Accepts the ranks above this one. A connection that does not prove the key, or claims a
// wrong size or rank, is turned away (logged) and waited past.
Status accept_peers(const TcpOptions& o, const tcp::Fd& listener, double deadline, std::vector<tcp::Fd>* fds) {
  tcp::AuthGate gate(listener, o.key, "peer", "hvd rank " + std::to_string(o.rank));
  auto admit = [&](const std::string& claim, std::string* why) {
    std::istringstream in(claim);
    int rank = -1, size = 0;
    if (!(in >> rank >> size)) *why = "not an hvd rank";
    else if (size != o.size) *why = "world size " + std::to_string(size) + ", this rank's is " + std::to_string(o.size);
    else if (rank <= o.rank || rank >= o.size || (*fds)[static_cast<size_t>(rank)].valid())
      *why = "unexpected rank " + std::to_string(rank);
    return why->empty();
  };
  int left = o.size - 1 - o.rank;
  while (left > 0) {
    tcp::Fd c;
    std::string claim;
    Status s = gate.next(deadline, admit, &c, &claim);
    if (s.code() == StatusCode::kTimeout) {
      std::string list;
      for (int q = o.rank + 1; q < o.size; ++q)
        if (!(*fds)[static_cast<size_t>(q)].valid()) list += (list.empty() ? "" : ", ") + std::to_string(q);
      return Status::Timeout("rank(s) " + list + " did not connect to rank " + std::to_string(o.rank) + " within " +
                             timeout_text(o));
    }
    HVD_RETURN_IF_ERROR(s);
    (*fds)[static_cast<size_t>(std::stoi(claim))] = std::move(c);
    --left;
  }
  return Status::OK();
}

// Node ids: ranks reporting the same host share one; with ranks_per_node k, every k of a
// host's ranks (in rank order) are a node of their own.
std::vector<int> nodes_of(const std::vector<PeerAddr>& peers, int64_t ranks_per_node) {
  std::map<std::string, int> host_id, seen;
  std::vector<int> node;
  for (const PeerAddr& p : peers) {
    if (!host_id.count(p.host)) host_id[p.host] = static_cast<int>(host_id.size());
    const int local = seen[p.host]++;
    const int sub = ranks_per_node > 0 ? static_cast<int>(local / ranks_per_node) : 0;
    node.push_back(host_id[p.host] * static_cast<int>(peers.size()) + sub);
  }
  return node;
}

Status check(const TcpOptions& o) {
  if (o.size < 1) return Status::InvalidArgument("tcp world size must be at least 1 (got " + std::to_string(o.size) + ")");
  if (o.rank < 0 || o.rank >= o.size)
    return Status::InvalidArgument("tcp rank " + std::to_string(o.rank) + " is outside [0, " + std::to_string(o.size) + ")");
  if (o.rendezvous_addr.empty() || o.rendezvous_port <= 0 || o.rendezvous_port > 65535)
    return Status::InvalidArgument("tcp rendezvous address missing or port invalid");
  if (o.key.empty() || o.key.find_first_of(" \n") != std::string::npos)
    return Status::InvalidArgument("tcp rendezvous key must be non-empty, without spaces");
  if (!(o.start_timeout_s > 0) || !std::isfinite(o.start_timeout_s))
    return Status::InvalidArgument("tcp start timeout must be a positive number of seconds");
  return Status::OK();
}

}  // namespace

Status make_tcp_world_transport(const TcpOptions& opts, std::unique_ptr<Transport>* out) {
  HVD_RETURN_IF_ERROR(check(opts));
  const double deadline = tcp::now_s() + opts.start_timeout_s;
  const std::string host = opts.hostname.empty() ? tcp::host_name() : opts.hostname;
  const std::string addr = opts.advertise_addr.empty() ? host : opts.advertise_addr;
  int port = 0;
  tcp::Fd listener;
  Status ls = tcp::listen_on(addr, &port, &listener);
  if (!ls.ok())
    return Status(ls.code(), ls.message() + " (the address this rank advertises: set HVD_TCP_ADDR to one of its own)");
  std::unique_ptr<tcp::RendezvousClient> rv;
  HVD_RETURN_IF_ERROR(tcp::RendezvousClient::connect(opts.rendezvous_addr, opts.rendezvous_port, opts.key, deadline, &rv));
  HVD_RETURN_IF_ERROR(rv->set(opts.scope + "/rank/" + std::to_string(opts.rank), addr + " " + std::to_string(port) + " " + host));
  std::vector<PeerAddr> peers;
  HVD_RETURN_IF_ERROR(gather_addresses(*rv, opts, deadline, &peers));
  std::vector<tcp::Fd> fds(static_cast<size_t>(opts.size));
  for (int q = 0; q < opts.rank; ++q)
    HVD_RETURN_IF_ERROR(connect_peer(opts, q, peers[static_cast<size_t>(q)], deadline, &fds[static_cast<size_t>(q)]));
  HVD_RETURN_IF_ERROR(accept_peers(opts, listener, deadline, &fds));
  std::vector<std::string> names;
  for (const PeerAddr& p : peers) names.push_back(p.addr + ":" + std::to_string(p.port));
  auto fabric = std::make_shared<tcp::Fabric>(opts.rank, std::move(fds), std::move(names));
  *out = tcp::make_world_transport(std::move(fabric), nodes_of(peers, opts.ranks_per_node), opts.start_timeout_s);
  return Status::OK();
}

bool tcp_launched_from_env() {
  const char* c = std::getenv("HVD_CONTROLLER");
  if (!c) c = std::getenv("HOROVOD_CONTROLLER");
  return c && (std::string(c) == "tcp" || std::string(c) == "gloo");
}

namespace {

Status env_text(const char* name, bool required, std::string* out) {
  const char* v = std::getenv(name);
  if (v && *v) {
    *out = v;
    return Status::OK();
  }
  return required ? Status::InvalidArgument(std::string(name) + " is not set (hvdrun --tcp sets it)") : Status::OK();
}

Status env_int(const char* name, bool required, int* out) {
  std::string v;
  HVD_RETURN_IF_ERROR(env_text(name, required, &v));
  if (v.empty()) return Status::OK();
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (*end || n < 0 || n > 1 << 30) return Status::InvalidArgument(std::string(name) + "=" + v + ": not a count");
  *out = static_cast<int>(n);
  return Status::OK();
}

}  // namespace

namespace {

// Everything but the rank and the size (elastic workers get those from a generation).
Status common_options_from_env(TcpOptions* o) {
  HVD_RETURN_IF_ERROR(env_text("HVD_RENDEZVOUS_ADDR", true, &o->rendezvous_addr));
  HVD_RETURN_IF_ERROR(env_int("HVD_RENDEZVOUS_PORT", true, &o->rendezvous_port));
  HVD_RETURN_IF_ERROR(env_text("HVD_RENDEZVOUS_KEY", true, &o->key));
  HVD_RETURN_IF_ERROR(env_text("HVD_HOSTNAME", false, &o->hostname));
  HVD_RETURN_IF_ERROR(env_text("HVD_TCP_ADDR", false, &o->advertise_addr));
  std::string t;
  HVD_RETURN_IF_ERROR(env_text("HVD_START_TIMEOUT", false, &t));
  if (!t.empty()) {
    char* end = nullptr;
    o->start_timeout_s = std::strtod(t.c_str(), &end);
    if (*end || !(o->start_timeout_s > 0) || !std::isfinite(o->start_timeout_s))
      return Status::InvalidArgument("HVD_START_TIMEOUT=" + t + ": not a positive number of seconds");
  }
  return Status::OK();
}

}  // namespace

Status tcp_options_from_env(TcpOptions* out) {
  TcpOptions o;
  HVD_RETURN_IF_ERROR(common_options_from_env(&o));
  HVD_RETURN_IF_ERROR(env_int("HVD_RANK", true, &o.rank));
  HVD_RETURN_IF_ERROR(env_int("HVD_SIZE", true, &o.size));
  HVD_RETURN_IF_ERROR(check(o));
  *out = o;
  return Status::OK();
}

Status tcp_elastic_options_from_env(TcpOptions* out) {
  TcpOptions o;
  HVD_RETURN_IF_ERROR(common_options_from_env(&o));
  HVD_RETURN_IF_ERROR(check(o));
  *out = o;
  return Status::OK();
}

}  // namespace hvd
