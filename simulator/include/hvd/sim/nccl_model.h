// NCCL's data path on a modelled machine: which algorithm and protocol NCCL 2.26 picks for a
// collective, as NCCL's own tuner picks it (src/graph/tuning.cc, search.cc, enqueue.cc of
// NVIDIA/nccl v2.26.6-1) from the machine's links, how many channels it runs, and how long
// the call takes on the model's clock: the tuner's latencies and bandwidths, NVLS as it moves
// and waits, nccl-tests' single-thread launch where one thread drives several GPUs, the kernel
// launch as a floor. The links come from
// the scenario's cluster; the constants, their sources and where the model departs from
// NCCL are in docs/nccl_model.md.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "hvd/sim/cluster.h"
#include "hvd/status.h"

namespace hvd::sim {

/// NCCL's algorithms (NCCL_ALGO), protocols (NCCL_PROTO) and the collectives nccl-tests
/// times. Each enum's order is the one index space of the model's tables
/// (simulator/src/model/nccl_model.cc: one row per algorithm, one column per protocol, one
/// row per collective) and of their names; the counts below follow the last enumerator.
enum class NcclAlgo { kRing, kTree, kNvls, kNvlsTree, kCollnet, kPat };
enum class NcclProto { kLL, kLL128, kSimple };
enum class NcclColl { kAllreduce, kAllgather, kReducescatter, kBroadcast, kAlltoall };
inline constexpr int kNcclAlgos = static_cast<int>(NcclAlgo::kPat) + 1;
inline constexpr int kNcclProtos = static_cast<int>(NcclProto::kSimple) + 1;
inline constexpr int kNcclColls = static_cast<int>(NcclColl::kAlltoall) + 1;

/// "ring", "tree", "nvls", "nvls_tree", "collnet", "pat".
const char* nccl_algo_name(NcclAlgo a);
/// "LL", "LL128", "Simple".
const char* nccl_proto_name(NcclProto p);
/// "allreduce", "allgather", "reducescatter", "broadcast", "alltoall".
const char* nccl_coll_name(NcclColl c);
/// Every name of each enum, in the enum's order (for messages and command-line choices).
std::vector<std::string> nccl_algo_names();
std::vector<std::string> nccl_proto_names();
std::vector<std::string> nccl_coll_names();
/// Parses an algorithm or a protocol name in any case, as NCCL reads NCCL_ALGO and
/// NCCL_PROTO; a collective name as written. False if unknown.
bool parse_nccl_algo(const std::string& name, NcclAlgo* out);
bool parse_nccl_proto(const std::string& name, NcclProto* out);
bool parse_nccl_coll(const std::string& name, NcclColl* out);

/// NCCL's settings of a job, parsed once from the scenario's runtime section
/// (simulator/src/input/nccl_settings.cc) and read as they are by the model, the simulated
/// world and the reports.
struct NcclSettings {
  bool enabled = false;            ///< runtime.gpu_operations "nccl": GPU collectives on NCCL
  std::optional<NcclAlgo> algo;    ///< runtime.nccl_algo (NCCL_ALGO); none: "auto", the tuner's argmin
  std::optional<NcclProto> proto;  ///< runtime.nccl_proto (NCCL_PROTO); none: "auto", every protocol
  int min_channels = 0;            ///< runtime.nccl_min_nchannels (NCCL_MIN_NCHANNELS); 0: NCCL's count
  int max_channels = 64;           ///< runtime.nccl_max_nchannels (NCCL_MAX_NCHANNELS), at most 64
  /// The algorithm's name, or "auto".
  const char* algo_name() const { return algo ? nccl_algo_name(*algo) : "auto"; }
  /// The protocol's name, or "auto".
  const char* proto_name() const { return proto ? nccl_proto_name(*proto) : "auto"; }
};

/// The machine as NCCL's topology search sees it.
struct NcclMachine {
  int nodes = 1;             ///< NCCL's nodes taking part: servers, or NVLink domains of several
                             ///< servers (cluster.nvlink_domain_nodes; NCCL's MNNVL)
  int ranks_per_node = 1;    ///< GPUs per NCCL node taking part
  int arch = 80;             ///< compute capability x 10 (70 Volta, 80 Ampere, 90 Hopper, 100 Blackwell)
  double nvlink = 0;         ///< GB/s per GPU and direction as NCCL counts NVLink (links x
                             ///< SMxx_NVLINK_BW); 0: GPUs talk over PCIe
  bool nvswitch = false;     ///< NVLink through NVSwitch (every GPU reaches every other)
  bool nvls = false;         ///< NVSwitch with in-switch reduction (NVLink SHARP, Hopper)
  double pcie = 24;          ///< GB/s of the GPU <-> NIC PCIe path (width x rate / 80)
  double nic = 25;           ///< GB/s of one NIC (line rate x payload efficiency)
  int nics_per_node = 1;     ///< NICs a node's channels use (rails; an NVLink domain's NICs)
  bool amd_cpu = false;      ///< AMD hosts (NCCL's network overhead and LL caps differ)
  bool collnet = false;      ///< in-network reduction on the fabric (InfiniBand SHARP)
  double launch_s = 6e-6;    ///< per-call floor: a call cannot be issued faster than one
                             ///< kernel launch (it overlaps the kernel before it)
  int min_channels = 0;      ///< NCCL_MIN_NCHANNELS (NCCL_MIN_CTAS): 0 leaves NCCL's count
  int max_channels = 64;     ///< NCCL_MAX_NCHANNELS (NCCL_MAX_CTAS), at most MAXCHANNELS (64)
                             ///< (both NcclSettings', which nccl_machine copies)
  int gpus_per_thread = 1;   ///< GPUs one host thread drives, launching their kernels in turn
                             ///< (nccl-tests -g); 1: a process per GPU, as Horovod runs
  double slow_gpu_link = 0;  ///< GB/s of a GPU link of the job trained below its rate
                             ///< (cluster.degraded_links): every ring and tree crosses that GPU,
                             ///< so no bus rate exceeds it; 0: none
  int ranks() const { return nodes * ranks_per_node; }
};

/// The machine of `np` ranks of `cluster` (np / gpus_per_node servers, packed), with the
/// channel counts of `settings`. Refuses what the model does not price: a platform file, a
/// blocking fabric, a degraded link's extra latency.
StatusOr<NcclMachine> nccl_machine(const ClusterSpec& cluster, int np, const NcclSettings& settings = {});

/// What NCCL's topology search settles on for one algorithm: channels and GB/s each.
struct NcclGraph {
  int channels = 0;    ///< graph.nChannels as the tuner reads it
  double bw = 0;       ///< GB/s per channel (bwIntra for <= 2 nodes, else bwInter)
};
/// The ring/tree graph (same channels) and the NVLS graph of `m`.
NcclGraph nccl_ring_graph(const NcclMachine& m);
NcclGraph nccl_nvls_graph(const NcclMachine& m);
/// The communicator's ring/tree channels (ncclTopoPostset): twice the graph's, cut to
/// NCCL_MAX_NCHANNELS, then copied up to NCCL_MIN_NCHANNELS, at most 64.
int nccl_comm_channels(const NcclMachine& m);

/// One call as NCCL would run it.
struct NcclCall {
  NcclAlgo algo = NcclAlgo::kRing;
  NcclProto proto = NcclProto::kSimple;
  double seconds = 0;   ///< the call on the model's clock (never below the launch floor)
  double tuner_us = 0;  ///< NCCL's own estimate (no launch)
  int channels = 0;     ///< channels the call uses
  bool ok = false;      ///< false: no enabled algorithm can run it
};

/// NCCL's choice and time for `coll` of `bytes`, the size nccl-tests reports (the buffer of
/// allreduce and broadcast; the whole gathered buffer of allgather, reducescatter and
/// alltoall). Without `settings.algo` the tuner picks the cheapest (algorithm, protocol) as
/// NCCL does; with it that algorithm runs, as NCCL_ALGO forces it (ok = false where it cannot
/// run). `settings.proto` forces the protocol as NCCL_PROTO does (an alltoall runs Simple
/// only). The channel counts are the machine's.
NcclCall nccl_call(const NcclMachine& m, NcclColl coll, size_t bytes, const NcclSettings& settings = {});

/// nccl-tests' bus bandwidth factor of `coll` at `ranks`: busbw = algbw x factor.
double nccl_bus_factor(NcclColl coll, int ranks);

}  // namespace hvd::sim
