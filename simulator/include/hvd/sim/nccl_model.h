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
#include <string>

#include "hvd/sim/cluster.h"
#include "hvd/status.h"

namespace hvd::sim {

/// NCCL's algorithms (NCCL_ALGO) and protocols (NCCL_PROTO).
enum class NcclAlgo { kRing, kTree, kNvls, kNvlsTree, kCollnet };
enum class NcclProto { kLL, kLL128, kSimple };
/// The collectives nccl-tests times.
enum class NcclColl { kAllreduce, kAllgather, kReducescatter, kBroadcast, kAlltoall };

/// "ring", "tree", "nvls", "nvls_tree", "collnet".
const char* nccl_algo_name(NcclAlgo a);
/// "LL", "LL128", "Simple".
const char* nccl_proto_name(NcclProto p);
/// "allreduce", ...
const char* nccl_coll_name(NcclColl c);
/// Parses a collective name; false if unknown.
bool parse_nccl_coll(const std::string& name, NcclColl* out);

/// The machine as NCCL's topology search sees it.
struct NcclMachine {
  int nodes = 1;             ///< servers taking part
  int ranks_per_node = 1;    ///< GPUs per server taking part
  int arch = 80;             ///< compute capability x 10 (70 Volta, 80 Ampere, 90 Hopper)
  double nvlink = 0;         ///< GB/s per GPU and direction as NCCL counts NVLink (links x
                             ///< SMxx_NVLINK_BW); 0: GPUs talk over PCIe
  bool nvswitch = false;     ///< NVLink through NVSwitch (every GPU reaches every other)
  bool nvls = false;         ///< NVSwitch with in-switch reduction (NVLink SHARP, Hopper)
  double pcie = 24;          ///< GB/s of the GPU <-> NIC PCIe path (width x rate / 80)
  double nic = 25;           ///< GB/s of one NIC (line rate x payload efficiency)
  int nics_per_node = 1;     ///< NICs a node's channels use (rails)
  bool amd_cpu = false;      ///< AMD hosts (NCCL's network overhead and LL caps differ)
  bool collnet = false;      ///< in-network reduction on the fabric (InfiniBand SHARP)
  double launch_s = 6e-6;    ///< per-call floor: a call cannot be issued faster than one
                             ///< kernel launch (it overlaps the kernel before it)
  int min_channels = 0;      ///< NCCL_MIN_NCHANNELS (NCCL_MIN_CTAS): 0 leaves NCCL's count
  int max_channels = 64;     ///< NCCL_MAX_NCHANNELS (NCCL_MAX_CTAS), at most MAXCHANNELS (64)
  int gpus_per_thread = 1;   ///< GPUs one host thread drives, launching their kernels in turn
                             ///< (nccl-tests -g); 1: a process per GPU, as Horovod runs
  double slow_gpu_link = 0;  ///< GB/s of a GPU link of the job trained below its rate
                             ///< (cluster.degraded_links): every ring and tree crosses that GPU,
                             ///< so no bus rate exceeds it; 0: none
  int ranks() const { return nodes * ranks_per_node; }
};

/// The machine of `np` ranks of `cluster` (np / gpus_per_node servers, packed).
StatusOr<NcclMachine> nccl_machine(const ClusterSpec& cluster, int np);

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
/// alltoall). `algo` "auto" lets the tuner pick the cheapest (algorithm, protocol) as NCCL
/// does; "ring", "tree", "nvls", "nvls_tree" or "collnet" forces one, as NCCL_ALGO does
/// (ok = false where it cannot run). `proto` "auto", or "LL", "LL128", "Simple" (any case)
/// forces the protocol as NCCL_PROTO does (an alltoall runs Simple only).
NcclCall nccl_call(const NcclMachine& m, NcclColl coll, size_t bytes, const std::string& algo = "auto",
                   const std::string& proto = "auto");
/// True where `proto` ("auto" or a protocol name, any case) admits protocol `p`.
bool nccl_proto_matches(const std::string& proto, NcclProto p);

/// nccl-tests' bus bandwidth factor of `coll` at `ranks`: busbw = algbw x factor.
double nccl_bus_factor(NcclColl coll, int ranks);

}  // namespace hvd::sim
