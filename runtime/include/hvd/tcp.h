// The TCP backend: point-to-point over sockets between the ranks, without MPI. Ranks find
// each other through a small key-value server (the rendezvous; hvdrun --tcp starts it):
// each rank listens on a port of its own, publishes "address port host" under its rank,
// reads every other rank's, and connects to the ranks below it (a full mesh, one socket
// per pair). The runtime's own collectives run on top; there are no native ones.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hvd/status.h"
#include "hvd/transport.h"

namespace hvd {

/// Default for every wait of the start (rendezvous, connections): horovodrun's
/// --start-timeout.
inline constexpr double kDefaultStartTimeoutS = 30;

/// What one rank needs to join a TCP world.
struct TcpOptions {
  std::string rendezvous_addr;  ///< the key-value server (HVD_RENDEZVOUS_ADDR)
  int rendezvous_port = 0;      ///< HVD_RENDEZVOUS_PORT
  std::string key;              ///< the job's secret: the server and every peer check it (HVD_RENDEZVOUS_KEY)
  std::string scope = "world";  ///< names in the store are "<scope>/..." (several worlds per server)
  int rank = 0;                 ///< HVD_RANK
  int size = 1;                 ///< HVD_SIZE
  std::string hostname;         ///< the host this rank reports: ranks with equal ones share a node (HVD_HOSTNAME)
  std::string advertise_addr;   ///< where peers connect to it ("" = hostname; HVD_TCP_ADDR)
  double start_timeout_s = kDefaultStartTimeoutS;  ///< HVD_START_TIMEOUT
  int64_t ranks_per_node = 0;   ///< > 0: every k ranks of a host count as one node (knob ranks_per_node)
};

/// True when hvdrun --tcp started this process (HVD_CONTROLLER=tcp, or gloo).
bool tcp_launched_from_env();
/// The options from the HVD_* variables hvdrun --tcp sets; one clear error naming the
/// variable when one is missing or malformed.
Status tcp_options_from_env(TcpOptions* out);
/// Joins the world: rendezvous, then a connection to every other rank. Every wait ends by
/// opts.start_timeout_s with an error naming what did not happen (a rank that never
/// arrived, a wrong key, a peer that refused the connection).
Status make_tcp_world_transport(const TcpOptions& opts, std::unique_ptr<Transport>* out);

/// The rendezvous: a key-value server over TCP, protocol in backends/tcp/rendezvous.cc.
class RendezvousServer {
 public:
  /// Listens on `port` (0: any free port) of the interface with address `bind_addr` (the
  /// address the ranks are given, never every interface); clients must prove they know
  /// `key` (challenge-response; the key itself never crosses the wire).
  static Status start(const std::string& key, int port, std::unique_ptr<RendezvousServer>* out,
                      const std::string& bind_addr = "127.0.0.1");
  virtual ~RendezvousServer() = default;
  /// The port it listens on.
  virtual int port() const = 0;
  /// Stores `value` under `name` from this process (hvdrun's elastic driver publishes
  /// generations this way).
  virtual void put(const std::string& name, const std::string& value) = 0;
  /// Reads `name` from this process; false when it is not set.
  virtual bool get(const std::string& name, std::string* value) const = 0;
  /// The names set that start with `prefix`, in order.
  virtual std::vector<std::string> names_under(const std::string& prefix) const = 0;
};

/// Elastic mode (hvdrun --host-discovery-script): the world comes from the rendezvous's
/// generations instead of HVD_RANK/HVD_SIZE. The driver stores "elastic/gen" = g (the
/// latest generation) and "elastic/<g>/assign" = one "<worker id> <host>" line per rank,
/// in rank order. A worker knows its id from HVD_ELASTIC_WORKER.
bool tcp_elastic_from_env();
/// The options of elastic mode from the environment (rank and size still unset).
Status tcp_elastic_options_from_env(TcpOptions* out);
/// Joins the first generation newer than `after` that names this worker (waiting for one
/// up to opts.start_timeout_s): its ranks meet under the scope "gen<g>". *gen gets g.
Status join_elastic_tcp_world(TcpOptions opts, int64_t after, int64_t* gen, std::unique_ptr<Transport>* out);
/// The latest generation the driver published (0 before the first).
Status latest_elastic_generation(const TcpOptions& opts, int64_t* gen);

}  // namespace hvd
