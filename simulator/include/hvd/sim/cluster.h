// What a simulated cluster is made of: servers of GPUs, the links inside a server, the
// network between servers, and the cost of device memory operations. Built from a
// scenario (scenario.h) or directly by tests. All bandwidths are bytes per second, all
// latencies seconds.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace hvd::sim {

/// Links inside one server.
struct IntraNodeSpec {
  std::string type = "pcie";  ///< "pcie" (tree through the PCIe switch) or "nvlink" (all-to-all)
  double bandwidth = 0;       ///< per GPU and direction; 0: the GPU catalogue's figure
  double latency = 1e-6;      ///< one hop GPU -> switch
};

/// The network joining the servers.
struct NetworkSpec {
  std::string topology = "star";    ///< "star" (one switch), "fat_tree" (two levels), "torus"
  double bandwidth = 25e9 / 8;      ///< line rate of one NIC, per direction
  double latency = 5e-6;            ///< one-way wire + switch latency between two NICs
  std::string nic = "per_server";   ///< "per_server" (one NIC shared by the GPUs) or "per_gpu"
  std::string protocol = "roce";    ///< "roce", "infiniband" or "tcp": sets the two below
  double efficiency = -1;           ///< achievable fraction of the line rate (-1: protocol default)
  double message_overhead = -1;     ///< software cost per inter-node message, s (-1: default)
  double connection_rate = -1;      ///< ceiling of one connection (one flow between two
                                    ///< servers), bytes/s; 0: none (-1: protocol default)
  int servers_per_switch = 16;      ///< fat_tree: servers under one leaf switch
  double oversubscription = 1;      ///< fat_tree: leaf down-bandwidth / up-bandwidth
  std::string torus_dims;           ///< torus: "8x4x4" (product = nodes)
  bool sharp = false;               ///< in-network reduction in the switches (InfiniBand
                                    ///< SHARP: NCCL's CollNet algorithms)
  std::string dragonfly;            ///< dragonfly: "G,g;C,c;R,r;N" (SimGrid's topo_parameters:
                                    ///< groups, chassis per group, routers per chassis, each
                                    ///< with its link count, then servers per router;
                                    ///< G*C*R*N = nodes)

  /// The efficiency in effect (explicit, or the protocol's default).
  double effective_efficiency() const;
  /// The per-message overhead in effect.
  double effective_overhead() const;
  /// The per-connection ceiling in effect, bytes/s (0: none).
  double effective_connection_rate() const;
};

/// A what-if on one server's network path (or one GPU's link inside its server).
struct LinkDegradation {
  int node = 0;                 ///< server index
  int gpu = -1;                 ///< >= 0: that GPU's intra-node link instead of the NIC
  double bandwidth_factor = 1;  ///< multiplies the link bandwidth (0.5: half speed)
  double extra_latency = 0;     ///< added to the link latency, seconds
};

/// The whole machine.
struct ClusterSpec {
  int nodes = 1;                 ///< servers
  int gpus_per_node = 1;         ///< GPUs per server (one rank each)
  int nvlink_domain_nodes = 1;   ///< servers whose GPUs share one NVLink domain (multi-node
                                 ///< NVLink through NVLink switch trays, GB200 NVL72: 18 trays
                                 ///< of 4); NCCL treats such a domain as one node
  std::string gpu = "P100";      ///< GPU catalogue name
  std::string host_cpu = "intel";  ///< "intel" or "amd" (DGX A100: EPYC): NCCL's network
                                   ///< overhead and LL caps depend on it
  IntraNodeSpec intra;           ///< inside a server
  NetworkSpec network;           ///< between servers
  std::string platform_file;     ///< a SimGrid platform XML instead of the above ("" = build)
  double gpu_speed_cv = 0;       ///< GPU-to-GPU variation of compute speed (coefficient of
                                 ///< variation); GPU 0 is the median one
  int64_t gpu_speed_seed = 0;    ///< which draw of gpu_speed_cv's factors (0: the historic
                                 ///< stream; hvdsim --seeds K runs seeds seed..seed+K-1)
  std::map<int, double> gpu_speed;              ///< what-if stragglers: rank -> speed (0.5: half)
  std::vector<LinkDegradation> degraded_links;  ///< what-if slow links / degraded NICs

  /// Compute-time factor of GPU `r`: 1 + cv * z_r, z_r a fixed normal draw per GPU and
  /// gpu_speed_seed (z_0 = 0 at every seed), clamped to +-3.5; divided by the what-if speed
  /// of `r` (gpu_speed).
  double gpu_slowdown(int r) const;

  /// Total GPUs.
  int gpus() const { return nodes * gpus_per_node; }
};

/// What device memory operations cost (simulated time on the rank's actor).
struct DeviceCostSpec {
  double copy_bandwidth = 0;        ///< bytes/s of a device memcpy (0: free)
  double reduce_bandwidth = 0;      ///< bytes/s of reduced data (0: free)
  /// Rates for data in cache (0: the same as above). Used with the cache model
  /// (simulation.cache): an operation's time blends the two by the fraction of its bytes
  /// the rank touched recently.
  double copy_bandwidth_hot = 0, reduce_bandwidth_hot = 0;
  bool host_staged = false;         ///< gradients staged through host memory over PCIe
  double pcie_bandwidth = 12e9;     ///< host staging: device<->host copy rate
  double host_reduce_bandwidth = 5e9;  ///< host staging: CPU reduction rate
  bool scatter_gather = false;         ///< works on tensors where they lie (host memory: the real
                                       ///< CPU device's zero-copy path, no fusion-buffer copies)
};

/// SimGrid modelling choices.
struct SimModelSpec {
  std::string network_model = "CM02";  ///< SimGrid network model (CM02: plain alpha-beta sharing)
  bool cross_traffic = false;          ///< model TCP ACK cross-traffic
  int stack_kib = 256;                 ///< stack of each simulated actor
  double device_tolerance = 1e-6;      ///< device work may lag this much before a message
                                       ///< is posted (0: exact, one sleep per operation)
  int64_t train_transfers = 6;         ///< phantom runs: a ring's message sequence on one
                                       ///< link travels as about this many transfers
                                       ///< (TrainLinks::transfers; 0: every message)
  double wakeup_latency = 0;           ///< a notified thread resumes this much later (OS
                                       ///< scheduling; from a calibration's per-call overhead)
  /// Effective bandwidth by message size: (bytes, factor) points, a message of n bytes
  /// moves n x factor(n) bytes on the wire (log-size interpolation; empty = 1). Index 0:
  /// messages within a server, 1: across servers. From a calibration's measured table.
  std::vector<std::pair<double, double>> bandwidth_factors[2];
  /// The same for data not in cache (bandwidth_factors are then the in-cache ones).
  std::vector<std::pair<double, double>> bandwidth_factors_cold[2];
  /// Cache per rank, bytes (0: no cache model, every message uses bandwidth_factors). A
  /// message's bytes are in cache when the rank touched them (sent or received) less than
  /// this many bytes ago; buffers without an address (phantom gradients) are never.
  double cache_bytes = 0;
  /// Optional: the hot fraction against reuse distance, (bytes, fraction in [0, 1]) points
  /// with increasing bytes (log-size interpolation, flat beyond the ends). When given, a
  /// block touched d bytes ago counts as hot by that fraction instead of all-or-nothing at
  /// cache_bytes (from a calibration's cache probe).
  std::vector<std::pair<double, double>> cache_curve;
  /// A run stops with an error when the simulated clock passes this (seconds): the
  /// backstop against scenarios whose runs would never end (simulation.time_limit).
  double time_limit_s = 1e6;
};

/// Parses a dragonfly description "G,g;C,c;R,r;N" into {G,g,C,c,R,r,N} (all positive);
/// false if malformed.
bool parse_dragonfly(const std::string& text, std::vector<unsigned>* out);

/// What a protocol sets unless the scenario says otherwise (docs/simulator.md, "Network model").
struct ProtocolDefaults {
  double efficiency = 1;       ///< achieved fraction of the line rate
  double overhead = 0;         ///< software cost per inter-node message, s
  double connection_rate = 0;  ///< ceiling of one connection, bytes/s (0: none)
};
/// The defaults of "roce", "infiniband" or "tcp"; false if unknown.
bool protocol_defaults(const std::string& protocol, ProtocolDefaults* out);

}  // namespace hvd::sim
