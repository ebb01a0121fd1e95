// NCCL 2.26's tuner (src/graph/tuning.cc), its topology search's channel counts
// (src/graph/search.cc) and its per-call channel choice (src/enqueue.cc), over the links of a
// modelled machine, and the clock the chosen call runs on. Every tuner constant below is
// NCCL's, quoted with its line in NVIDIA/nccl at tag v2.26.6-1 (commit 8171af6,
// https://github.com/NVIDIA/nccl/tree/v2.26.6-1); the clock's own (the single-thread launch of
// nccl-tests -g, NVLS's loop, its share across nodes, NVLS tree's fill) are measured or
// derived, each with its public source; docs/nccl_model.md says where the model departs.
//
// The model is tables, one index space each: algorithms are rows in NcclAlgo's order
// (kAlgos), protocols are columns of those rows and rows of their own in NcclProto's order
// (kProtos), collectives are rows in NcclColl's order (kColls). Their names are kept there
// only; parsing, printing and reports read them through nccl_*_name and parse_nccl_*. NCCL's
// tuner and the clock price a call from the same rows: estimate_us is what NCCL computes to
// choose, clock_us what the simulation charges for the choice.
#include "hvd/sim/nccl_model.h"

#include <strings.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <utility>
#include <vector>

#include "hvd/workloads/gpu_catalog.h"

namespace hvd::sim {
namespace {

constexpr size_t idx(NcclAlgo a) { return static_cast<size_t>(a); }
constexpr size_t idx(NcclProto p) { return static_cast<size_t>(p); }
constexpr size_t idx(NcclColl c) { return static_cast<size_t>(c); }
constexpr unsigned bit(NcclColl c) { return 1u << idx(c); }

/// One value per protocol, in NcclProto's order.
using PerProto = std::array<double, kNcclProtos>;

// Bandwidth caps in GB/s (tuning.cc L144-L175): rows Volta, Ampere, Hopper, Blackwell (twice
// Hopper's in 2.26.6: "2*141.0", "2*36.7", ...); columns 1, 2, more nodes. llMaxBws' rows are the
// GPU generation on one node and the CPU vendor across nodes (row 0 Intel, row 1 AMD).
constexpr double kLLMaxBw[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
constexpr double kPerChMaxRingLL128Bw[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {73.4, 73.4, 73.4}};
constexpr double kPerChMaxTreeLL128Bw[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {73.4, 73.4, 58.0}};
constexpr double kPerChMaxTreeBw[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {77.4, 82.8, 72.0}};
// Per-channel search speeds in GB/s (search.cc L17-L53): the first that fits is taken.
constexpr double kSpeedIntra[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0};
constexpr double kSpeedIntraSm90[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
constexpr double kSpeedIntraSm100[] = {90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0};  // search.cc L923
constexpr double kSpeedInter[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                  7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr double kSpeedInterSm90[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                      15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};

// The protocols, one row each in NcclProto's order. Adding a protocol is a row here and a
// column in each algorithm's latencies (kAlgos); an algorithm whose bandwidth the protocol
// caps says how in its bandwidth function (ring_bw, tree_bw).
struct ProtoRow {
  NcclProto proto;
  const char* name;          // NCCL_PROTO's spelling
  int min_arch;              // the oldest GPU generation that runs it (compute capability x 10)
  int threads;               // threads of a channel (enqueue.cc: NCCL_LL128_MAX_NTHREADS 640)
  double thread_bytes;       // bytes each thread must get, else a call drops a channel
  bool thread_bytes_per_rank;  // thread_bytes per rank of the call (enqueue.cc L1751-L1792)
  double net_overhead;       // multiple of the per-step network overhead (tuning.cc: Simple 3)
  double switch_step_us;     // the clock's hop through NVSwitch (0: the tuner's, from kAlgos)
  double tree_correction[23];  // tree allreduce's bandwidth by log2(bytes / 64) (tuning.cc L522-L528)
};
// An LL128 step through NVSwitch: the tuner's 1.9 us is twice what one thread per GPU measures
// (DGX A100, nccl-tests -t N, NCCL_PROTO=LL128, one channel: ~20..~32 us for 2..8 GPUs, 1.0 us a
// step; NVIDIA/nccl-tests#123), and the published one-node H100 ring's LL128 sizes (4-32 MiB,
// togethercomputer/together-nccl-tests) leave at most 1.4 us a step beside the tuner's base.
constexpr ProtoRow kProtos[] = {
    {NcclProto::kLL, "LL", 0, 512, 8, true, 1, 0,
     {1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0, 1.0, 1.0}},
    {NcclProto::kLL128, "LL128", 70, 640, 8, false, 1, 1.0,
     {1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.9, 0.9, 0.9, 1.0, 1.0}},
    {NcclProto::kSimple, "Simple", 0, 512, 64, false, 3, 0,
     {0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7, 0.7, 0.8, 0.9, 0.9}}};

// The collectives, one row each in NcclColl's order. Adding a collective, or pricing one
// apart (sharded allgather / reduce-scatter), is a row here and its bit in the rows of the
// algorithms that run it (kAlgos' colls); an untuned one (alltoall) is priced as NCCL runs
// it, grouped send/receive (p2p_transfer_us).
struct CollRow {
  NcclColl coll;
  const char* name;  // nccl-tests' name, as --collective takes it
  int passes;        // times the buffer goes round a ring: n - 1 steps each (allreduce: 2)
  bool chain;        // one pass of n steps along one ring order for every channel (broadcast);
                     // its bus bandwidth is its algorithm bandwidth (nccl-tests)
  bool tuned;        // NCCL's tuner chooses its algorithm; else grouped send/receive
};
constexpr CollRow kColls[] = {{NcclColl::kAllreduce, "allreduce", 2, false, true},
                              {NcclColl::kAllgather, "allgather", 1, false, true},
                              {NcclColl::kReducescatter, "reducescatter", 1, false, true},
                              {NcclColl::kBroadcast, "broadcast", 1, true, true},
                              {NcclColl::kAlltoall, "alltoall", 1, false, false}};

// What the search gives an algorithm's channels: the ring graph's (ring, tree, and CollNet's,
// which the model does not search apart), or the NVLS graph's, across nodes at the NICs'
// share (NVLS tree: halved beyond two nodes, where the tree's up and down share them).
enum class Graph { kRing, kNvls, kNvlsTree };

// One (algorithm, protocol) of one call on one machine, as the shapes below price it.
struct Pricing {
  const NcclMachine* m = nullptr;
  NcclColl coll = NcclColl::kAllreduce;
  NcclProto p = NcclProto::kSimple;
  double bytes = 0;
  int nsteps = 0;      // steps of the ring (tuning.cc: nsteps)
  int nch = 0;         // channels, as the tuner reads them
  double bw_ch = 0;    // GB/s each
  double cap_ch = 0;   // channels the per-channel caps count
  double intra = 0;    // us per hop inside the node
  double inter = 0;    // us per hop across nodes
  double overhead = 0; // us of network overhead per step
  double base = 0;     // us, the algorithm's base latency
  double own_net = 0;  // us per network hop of this algorithm (inter may be the tree's)
  int gi = 0, ni = 0;  // rows of the cap tables: GPU generation, node count
  double ll_max = 0;   // LL's bandwidth cap, GB/s
  bool allreduce() const { return coll == NcclColl::kAllreduce; }
};

// The algorithms, one row each in NcclAlgo's order. Adding an algorithm is a row here: its
// NCCL_ALGO name, NCCL's id (NCCL_ALGO_*, src/include/nccl_common.h L54-L62: the tuner's argmin
// keeps the lower id on a tie), the collectives it runs, whether it runs Simple only, its graph, whether
// the clock runs it on the communicator's channels (NCCL_MIN/MAX_NCHANNELS), what the machine
// must have, its shape (bus and algorithm bandwidth from the channels; latency from the hops)
// and its latencies in us per protocol (columns in NcclProto's order; tuning.cc L118-L142:
// base, then per hop through NVLink, PCI and the network).
struct AlgoRow {
  NcclAlgo algo;
  const char* name;
  int nccl_id;
  unsigned colls;
  bool simple_only;
  Graph graph;
  bool comm_channels;
  bool (*fits)(const NcclMachine& m);
  double (*alg_bw)(const Pricing& c);  // GB/s; <= 0: it cannot run
  double (*latency_us)(const Pricing& c);
  PerProto base, nvlink, pci, net;
};

int log2i(double x) { return x < 1 ? 0 : static_cast<int>(std::floor(std::log2(x))); }

bool fits_any(const NcclMachine&) { return true; }
bool fits_nvls(const NcclMachine& m) { return m.nvls && (m.nodes == 1 || m.collnet); }
bool fits_nvls_tree(const NcclMachine& m) { return m.nvls && m.nodes > 1; }
bool fits_collnet(const NcclMachine& m) { return m.collnet && m.nvswitch && m.nodes > 1; }
// PAT (NCCL >= 2.23, tuning.cc ncclPatEnable): one GPU per node only (nNodes == nRanks).
bool fits_pat(const NcclMachine& m) { return m.ranks_per_node == 1 && m.nodes > 1; }

// NVLink SHARP's multicast groups hold at most NCCL_MAX_NVLS_ARITY (32 since 2.20, src/include/
// device.h) GPUs; allgather and reduce-scatter on NVLS need every local GPU in one.
constexpr int kMaxNvlsArity = 32;
bool gathers(const Pricing& c) { return c.coll == NcclColl::kAllgather || c.coll == NcclColl::kReducescatter; }

// Each GPU's link carries the bus rate: a slow one caps it.
double slow_link_cap(const NcclMachine& m, double bus) {
  return m.slow_gpu_link > 0 ? std::min(bus, m.slow_gpu_link) : bus;
}
// Bandwidths (tuning.cc L249-L297): channels x per-channel speed, the protocol's caps, then
// the algorithm's share of the bus.
double ring_bw(const Pricing& c) {
  double bus = c.nch * c.bw_ch;
  if (c.p == NcclProto::kLL) bus = std::min(c.ll_max, bus * 0.5);
  if (c.p == NcclProto::kLL128) bus = std::min(bus * 0.92, c.cap_ch * kPerChMaxRingLL128Bw[c.gi][c.ni]);
  bus = slow_link_cap(*c.m, bus);
  return bus * (static_cast<double>(c.m->ranks()) / c.nsteps);
}
double tree_bw(const Pricing& c) {
  double bus = c.nch * c.bw_ch;
  if (c.allreduce()) bus = std::min(bus * 0.92, c.cap_ch * kPerChMaxTreeBw[c.gi][c.ni]);
  if (c.p == NcclProto::kLL) bus = std::min(bus / 3.8, c.ll_max);
  if (c.p == NcclProto::kLL128)
    bus = std::min(bus * (c.m->nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), c.cap_ch * kPerChMaxTreeLL128Bw[c.gi][c.ni]);
  bus = slow_link_cap(*c.m, bus);
  if (c.allreduce()) {  // the tree correction (tuning.cc L530-L547)
    const int i = log2i(c.bytes / 64);
    if (c.bytes >= 64 && i < 23) bus *= kProtos[idx(c.p)].tree_correction[i];
  }
  return bus * 0.5;
}
// Allgather and reduce-scatter on an algorithm other than the ring keep the bus rate as their
// algorithm rate (tuning.cc: "Convert bus BW to algorithm BW" skips them).
double nvls_bw(const Pricing& c) {
  if (gathers(c)) return c.m->ranks_per_node > kMaxNvlsArity ? 0 : slow_link_cap(*c.m, c.nch * c.bw_ch);
  return slow_link_cap(*c.m, c.nch * c.bw_ch) * (5.0 / 6.0);
}
double collnet_bw(const Pricing& c) {
  const int ppn = c.m->ranks_per_node;
  if (gathers(c)) {  // one rank per NIC (collNetHeads), then NCCL's measured correction by ppn
    if (ppn > c.m->nics_per_node) return 0;
    const double w = (ppn - 1) / 7.0;
    return slow_link_cap(*c.m, ppn * c.bw_ch) * (w * 0.85 + (1 - w) * 0.95);
  }
  double bus = slow_link_cap(*c.m, c.nch * c.bw_ch);
  double factor = static_cast<double>(c.m->ranks_per_node) / c.nch;
  factor -= (factor - 1) / 2;
  bus /= factor;
  if (c.m->arch >= 90) bus *= 0.85;
  return bus * 0.5;
}
// PAT: the ring graph's channels at 0.75 (tuning.cc: "if (a == NCCL_ALGO_PAT) busBw *= .75").
double pat_bw(const Pricing& c) { return slow_link_cap(*c.m, c.nch * c.bw_ch) * 0.75; }

// Latencies (tuning.cc L298-L347): the base, then the hops.
double ring_latency_us(const Pricing& c) {
  const NcclMachine& m = *c.m;
  const CollRow& coll = kColls[idx(c.coll)];
  if (coll.chain) return c.base + (m.nodes > 1 ? c.own_net : c.intra);  // one ring order for every channel
  const int inter_steps = m.nodes == 1 ? 0 : coll.passes * (m.nodes - 1);
  double lat = c.base + ((c.nsteps - inter_steps) * std::max(c.intra, c.overhead) + inter_steps * c.inter);
  // Multi-node Simple allreduce past its plateau (tuning.cc L540-L545).
  if (c.p == NcclProto::kSimple && c.allreduce() && m.nodes > 1 && c.bytes / (2.0 * c.nch * m.ranks()) >= 64)
    lat *= m.arch >= 80 ? 1.4 : 1.9;
  return lat;
}
double tree_latency_us(const Pricing& c) {
  return c.base + 2 * ((c.m->ranks_per_node - 1) * c.intra + log2i(c.m->nodes) * c.inter);
}
double collnet_latency_us(const Pricing& c) {
  const int ppn = c.m->ranks_per_node;
  return c.base + (2 * (std::min(1, ppn - 1) * c.intra + (ppn - 1) * 0.4) + c.inter);
}
double nvls_latency_us(const Pricing& c) { return c.intra + (c.m->nodes > 1 ? c.inter : 0); }
double nvls_tree_latency_us(const Pricing& c) {
  return c.base + (c.intra + 2 * log2i(c.m->nodes) * c.inter);
}
// PAT: 8 us, a log of the nodes at the tree's network hop / 3.5, and a linear part, 2.8 us a
// rank (tuning.cc, NCCL_ALGO_PAT: "Still a linear part").
double pat_latency_us(const Pricing& c) {
  return c.base + log2i(c.m->nodes) * (c.inter / 3.5) + c.m->ranks() * 2.8;
}

constexpr unsigned kReducing = bit(NcclColl::kAllreduce) | bit(NcclColl::kAllgather) | bit(NcclColl::kReducescatter);
// Which algorithms run which collective: tuning.cc L238-L248, L405-L443.
constexpr AlgoRow kAlgos[] = {
    {NcclAlgo::kRing, "ring", 1, kReducing | bit(NcclColl::kBroadcast), false, Graph::kRing, true, fits_any, ring_bw,
     ring_latency_us, {6.6, 14.0, 8.4}, {0.6, 1.9, 3.4}, {1.0, 2.5, 5.7}, {2.7, 4.0, 14.0}},
    {NcclAlgo::kTree, "tree", 0, bit(NcclColl::kAllreduce), false, Graph::kRing, true, fits_any, tree_bw,
     tree_latency_us, {6.8, 14.0, 8.4}, {0.6, 1.25, 4.0}, {1.0, 1.9, 4.0}, {5.0, 8.5, 14}},
    {NcclAlgo::kNvls, "nvls", 4, kReducing, true, Graph::kNvls, false, fits_nvls, nvls_bw, nvls_latency_us,
     {0, 0, 0}, {0, 0, 25}, {0, 0, 0}, {0, 0, 18}},
    {NcclAlgo::kNvlsTree, "nvls_tree", 5, bit(NcclColl::kAllreduce), true, Graph::kNvlsTree, false, fits_nvls_tree,
     nvls_bw, nvls_tree_latency_us, {0, 0, 0}, {0, 0, 25}, {0, 0, 0}, {0, 0, 14}},
    {NcclAlgo::kCollnet, "collnet", 2, kReducing, true, Graph::kRing, false, fits_collnet, collnet_bw,
     collnet_latency_us, {0, 0, 0}, {0, 0, 3.7}, {0, 0, 3.7}, {0, 0, 31}},
    // PAT's hops are the tree's network hop at one GPU per node (start_pricing); its base 8 us.
    {NcclAlgo::kPat, "pat", 6, bit(NcclColl::kAllgather) | bit(NcclColl::kReducescatter), true, Graph::kRing, true,
     fits_pat, pat_bw, pat_latency_us, {0, 0, 8}, {0, 0, 4}, {0, 0, 4}, {0, 0, 14}}};

// Every row sits at its enumerator's index: the tables share the enums' one index space.
constexpr bool rows_in_enum_order() {
  for (size_t i = 0; i < std::size(kAlgos); ++i)
    if (idx(kAlgos[i].algo) != i) return false;
  for (size_t i = 0; i < std::size(kProtos); ++i)
    if (idx(kProtos[i].proto) != i) return false;
  for (size_t i = 0; i < std::size(kColls); ++i)
    if (idx(kColls[i].coll) != i) return false;
  return true;
}
static_assert(std::size(kAlgos) == kNcclAlgos && std::size(kProtos) == kNcclProtos &&
              std::size(kColls) == kNcclColls && rows_in_enum_order());

const AlgoRow& row(NcclAlgo a) { return kAlgos[idx(a)]; }
const ProtoRow& row(NcclProto p) { return kProtos[idx(p)]; }

// The clock takes NCCL's own latencies (the tuner's, which NVIDIA sets from nccl-tests with one
// thread per GPU: NVIDIA/nccl-tests#123), as a job with one process per GPU sees them; checked
// against NVIDIA's one-process-per-GPU sample on 8 H100 (NVIDIA/dgxc-benchmarking: 13.0-13.7 us
// at 8 B; the tuner's 15.0).
// nccl-tests with one host thread driving several GPUs (-g N) adds the thread's launching of
// their kernels in turn: the call cannot end before the last GPU's kernel runs, and the
// protocol's own latency passes while the thread launches. Measured: DGX A100, all_reduce_perf
// -g N, ring, one channel, LL, 8-128 B (NVIDIA/nccl-tests#123: 10.0, 13.76, 16.88, 20.8, 25.2,
// 29.5, 33.7 us for 2..8 GPUs), a line of 5.56 us + 3.96 us per GPU after the first (residuals
// under 0.61 us); NVIDIA's reply there: the CPU is the bottleneck.
constexpr double kLaunchFixedUs = 5.56;
constexpr double kLaunchPerGpuUs = 3.96;
double launch_floor_us(const NcclMachine& m) {
  return m.gpus_per_thread > 1 ? kLaunchFixedUs + kLaunchPerGpuUs * (m.gpus_per_thread - 1) : 0;
}
// NVLS with a network below it (NVLS tree, or NVLS over CollNet/SHARP) runs at a share of the
// one-node NVLS rate: with a network, the kernel's warps of each NVLS channel are split
// between NVLink SHARP reduce/multicast and network send/receive (src/device/all_reduce.h:
// NVLS tree 6 scatter / 5 gather / 5 reduce-to-net / 4 net-to-multicast warps; NVLS over
// CollNet 8/7/3/2), where one node gives them all to NVLink. Measured: nccl-tests on 2 x 8 H100
// with 8 x 400G InfiniBand, NCCL 2.26.2, NVLS tree, 8 GiB (NVIDIA/nccl-tests#309):
// 468.46 GB/s busbw, i.e. 249.9 GB/s algbw against the one-node NVLS rate of 274.7 the
// tuner's bandwidth gives. The same share puts 4 x DGX H100 + SHARP (NVLS across nodes, a
// different kernel and cluster) at 483 against NVIDIA's 480 (GTC 2024 S62129;
// docs/nccl_model.md).
constexpr double kNvlsNetworkShare = 0.91;
// NVLink SHARP delivers a smaller share of the links on Blackwell than on Hopper: NCCL's own
// tuner carries it as nvlsEfficiency, Hopper 0.85, Blackwell 0.74 (NVIDIA/nccl master,
// src/tuning/nvls.cc; 2.26.6 does not price it). The clock's NVLS rate is Hopper's as it moves
// and waits (below, no efficiency of its own), so it takes NCCL's ratio of the two: 0.74 / 0.85
// on Blackwell, 1 on Hopper.
double nvls_switch_efficiency(int arch) { return arch >= 100 ? 0.74 / 0.85 : 1.0; }
// NVLS tree pipelines a call in chunks: each channel takes a loop of one chunk per head at a
// time, and a loop passes three stages (reduce through the switch, the network, multicast
// through the switch), so the last stage starts two loops after the first. Chunk sizes are
// NCCL's (enqueue.cc, calcCollChunking, as read in a post-2.26 copy: NCCL_NVLS_CHUNKSIZE
// 128 KiB, 64 KiB from 4 nodes, then 64 KiB under 4 x and 32 KiB under 1 x (channels x heads
// x chunk) bytes). docs/nccl_model.md shows both public two-node curves against it.
constexpr double kNvlsTreeFillLoops = 2;
// NVLS allreduce on one node, on the clock, from what moves and what waits (no fitted number):
// each GPU pulls its slice reduced through the switch and multicasts it back, so its NVLink
// carries the buffer once plus its slice each way: per channel one link's rate x n/(n+1). A
// loop of one chunk per GPU (NCCL's chunk sizes: NCCL_NVLS_CHUNKSIZE 128 KiB, then 64 KiB under
// 64 x, 32 KiB under 8 x and 16 KiB under 2 x (channels x heads x chunk) bytes) reduces only once
// every GPU's part has landed: a flag written after the data and fenced, what the tuner prices
// a Simple step through NVLink (3.4 us) a loop. The multicast stage trails the reduce by one loop.
// Under nccl-tests' single-thread launch the latencies pass while the kernels start (`floor_us`).
// NCCL's chunk for an NVLS call (calcCollChunking): starting from `chunk`, each {multiple, size}
// in turn cuts it to `size` when the call is under multiple x (concurrent ops x chunk) bytes.
double nvls_chunk(double chunk, double bytes, double ops, std::initializer_list<std::pair<double, double>> cuts) {
  for (const auto& [multiple, size] : cuts)
    if (bytes < multiple * ops * chunk && chunk > size) chunk = size;
  return chunk;
}
double nvls_one_node_us(double bytes, int ppn, int nch, double link_gbps, double lat_us, double floor_us) {
  // link_gbps: one channel's share of the GPU's NVLink, at the switch's efficiency
  const double heads = ppn, ops = nch * heads;
  const double chunk = nvls_chunk(128 * 1024, bytes, ops, {{64, 65536}, {8, 32768}, {2, 16384}});
  const double rate = 1000.0 * link_gbps * heads / (heads + 1);  // bytes per us per channel
  const double loops = bytes / (ops * chunk);
  const double waits = (std::ceil(loops) + 1) * row(NcclAlgo::kRing).nvlink[idx(NcclProto::kSimple)];
  return std::max(floor_us, lat_us + waits) + (loops + 1) * heads * chunk / rate;
}
double nvls_tree_fill_us(const Pricing& c, double alg_bw) {
  const double heads = c.m->ranks_per_node, ops = c.nch * heads;
  const double chunk = nvls_chunk(c.m->nodes >= 4 ? 64 * 1024 : 128 * 1024, c.bytes, ops, {{4, 65536}, {1, 32768}});
  return kNvlsTreeFillLoops * heads * chunk / (1000.0 * alg_bw / c.nch);
}

// NVLink per link as NCCL counts it (topo.h L13-L34; SM100_NVLINK_BW 40.0 from 2.25), by generation.
double nvlink_per_link(int arch) { return arch >= 100 ? 40.0 : arch >= 90 ? 20.6 : arch >= 70 ? 20.0 : 18.0; }

int gen_index(int arch) { return arch >= 100 ? 3 : arch >= 90 ? 2 : arch >= 80 ? 1 : 0; }
int node_index(int nodes) { return nodes <= 2 ? nodes - 1 : 2; }

template <size_t N>
double first_fit(const double (&speeds)[N], double max_bw) {
  for (double s : speeds)
    if (s <= max_bw) return s;
  return speeds[N - 1];
}

template <typename Row, size_t N>
std::vector<std::string> names_of(const Row (&rows)[N]) {
  std::vector<std::string> names;
  for (const Row& r : rows) names.emplace_back(r.name);
  return names;
}

}  // namespace

const char* nccl_algo_name(NcclAlgo a) { return row(a).name; }
const char* nccl_proto_name(NcclProto p) { return row(p).name; }
const char* nccl_coll_name(NcclColl c) { return kColls[idx(c)].name; }
std::vector<std::string> nccl_algo_names() { return names_of(kAlgos); }
std::vector<std::string> nccl_proto_names() { return names_of(kProtos); }
std::vector<std::string> nccl_coll_names() { return names_of(kColls); }

bool parse_nccl_algo(const std::string& name, NcclAlgo* out) {
  for (const AlgoRow& r : kAlgos)
    if (strcasecmp(r.name, name.c_str()) == 0) return *out = r.algo, true;
  return false;
}
bool parse_nccl_proto(const std::string& name, NcclProto* out) {
  for (const ProtoRow& r : kProtos)
    if (strcasecmp(r.name, name.c_str()) == 0) return *out = r.proto, true;
  return false;
}
bool parse_nccl_coll(const std::string& name, NcclColl* out) {
  for (const CollRow& r : kColls)
    if (name == r.name) return *out = r.coll, true;
  return false;
}

namespace {

// The links NCCL's search sees on `g` in `c`.
void set_links(const ClusterSpec& c, const workloads::GpuSpec& g, NcclMachine* m) {
  const std::string& n = g.name;
  const bool blackwell = n.rfind("B2", 0) == 0 || n.rfind("GB2", 0) == 0;
  m->arch = blackwell ? 100 : n.rfind("H1", 0) == 0 || n.rfind("H2", 0) == 0 ? 90 : n.rfind("A1", 0) == 0 ? 80 : n.rfind("V1", 0) == 0 ? 70 : 60;
  if (c.intra.type == "nvlink" && g.nvlink_gbps > 0) {
    // The catalogue's per-direction total is 25 GB/s per link for NVLink 2-4, 50 for NVLink 5
    // (18 links of 100 GB/s both ways on Blackwell).
    const double links = std::round(g.nvlink_gbps / (m->arch >= 100 ? 50.0 : 25.0));
    m->nvlink = links * nvlink_per_link(m->arch);
    m->nvswitch = m->arch >= 80;  // DGX A100/H100 boards; V100 (DGX-1) is a hybrid cube mesh
    m->nvls = m->arch >= 90;
  }
  // GPU <-> NIC over PCIe x16: NCCL's width x rate / 80 (Gen3 12, Gen4 24, Gen5 48 GB/s).
  m->pcie = g.pcie_gbps >= 60 ? 48 : g.pcie_gbps >= 30 ? 24 : 12;
  m->nic = c.network.bandwidth * c.network.effective_efficiency() / 1e9;
  m->nics_per_node = (c.network.nic == "per_gpu" ? c.gpus_per_node : 1) * std::max(1, c.nvlink_domain_nodes);
  m->collnet = c.network.sharp;
  m->amd_cpu = c.host_cpu == "amd";
}

// NCCL's model is of a non-blocking fabric (a star, or a fat tree without oversubscription,
// as DGX pods are cabled): other fabrics are refused, not priced as if they were one.
Status check_fabric(const ClusterSpec& c, int nodes) {
  const NetworkSpec& net = c.network;
  if (!c.platform_file.empty())
    return Status::InvalidArgument("cluster.platform_file: NCCL's collectives (runtime.gpu_operations \"nccl\") are "
                                   "modelled on the scenario's own cluster, not on a platform file");
  if (nodes > 1 && (net.topology == "torus" || net.topology == "dragonfly" ||
                    (net.topology == "fat_tree" && net.oversubscription > 1)))
    return Status::InvalidArgument("cluster.network.topology: NCCL's collectives (runtime.gpu_operations \"nccl\") are "
                                   "modelled on a non-blocking fabric (star, or fat_tree with oversubscription 1), not on " +
                                   net.topology + (net.topology == "fat_tree" ? " with oversubscription" : ""));
  return Status::OK();
}

// A degraded link slows every channel that crosses it, and every ring and tree crosses
// every GPU of the job and every node's NICs: the slowest of the job's links sets the rate
// (NCCL's topology search sees a NIC or an NVLink trained at a lower speed too).
// Factors per node's NICs and per GPU link (as the platform applies them: each entry
// multiplies), then the slowest of the job's.
Status apply_degraded_links(const ClusterSpec& c, const workloads::GpuSpec& g, int np, NcclMachine* m) {
  // Per server of the job (an NVLink domain holds several), and per GPU of the job.
  const int servers = (np + c.gpus_per_node - 1) / c.gpus_per_node;
  std::vector<double> nics(static_cast<size_t>(servers), 1.0), links(static_cast<size_t>(np), 1.0);
  for (const LinkDegradation& d : c.degraded_links) {
    if (d.node >= servers || d.gpu >= c.gpus_per_node || d.node * c.gpus_per_node + std::max(0, d.gpu) >= np) continue;
    if (d.extra_latency > 0)
      return Status::InvalidArgument("cluster.degraded_links: extra_latency is not modelled for NCCL's collectives "
                                     "(runtime.gpu_operations \"nccl\"; NCCL's tuner prices each hop), bandwidth_factor is");
    (d.gpu < 0 ? nics[static_cast<size_t>(d.node)] : links[static_cast<size_t>(d.node * c.gpus_per_node + d.gpu)]) *=
        d.bandwidth_factor;
  }
  const double nic_factor = *std::min_element(nics.begin(), nics.end());
  const double gpu_factor = *std::min_element(links.begin(), links.end());
  m->nic *= nic_factor;
  if (gpu_factor < 1) {  // the GPU's link inside the server, at its real rate
    (m->nvlink > 0 ? m->nvlink : m->pcie) *= gpu_factor;
    m->slow_gpu_link = (m->nvlink > 0 ? g.nvlink_gbps : g.pcie_gbps) * gpu_factor;
  }
  return Status::OK();
}

}  // namespace

StatusOr<NcclMachine> nccl_machine(const ClusterSpec& c, int np, const NcclSettings& settings) {
  auto gpu = workloads::find_gpu(c.gpu);
  if (!gpu.ok()) return Status::InvalidArgument("cluster.gpu: " + gpu.error());
  const workloads::GpuSpec& g = gpu.value();
  NcclMachine m;
  if (np > c.gpus()) return Status::InvalidArgument("--np " + std::to_string(np) + ": the cluster has " + std::to_string(c.gpus()) + " GPUs");
  // NCCL's node: a server, or an NVLink domain of several (MNNVL: tuning.cc treats the
  // domain as one NVLink-connected node).
  const int domain = c.gpus_per_node * std::max(1, c.nvlink_domain_nodes);
  m.ranks_per_node = std::min(np, domain);
  m.nodes = (np + domain - 1) / domain;
  set_links(c, g, &m);
  HVD_RETURN_IF_ERROR(check_fabric(c, m.nodes));
  HVD_RETURN_IF_ERROR(apply_degraded_links(c, g, np, &m));
  m.min_channels = settings.min_channels;
  m.max_channels = settings.max_channels;
  return m;
}

NcclGraph nccl_ring_graph(const NcclMachine& m) {
  NcclGraph g;
  if (m.nodes == 1) {
    // One node: the GPU-to-GPU path. Search at the first speed that fits the per-GPU link
    // total, as many channels as fit in it; then DupChannels halves the speed and doubles
    // the channels (unless the speed is below 25, or an SM90 graph of > 4 channels below 50).
    const double total = m.nvlink > 0 ? m.nvlink : m.pcie;
    const double max_bw = m.nvlink > 0 && !m.nvswitch ? nvlink_per_link(m.arch) : total;  // cube mesh: one link per peer
    const double speed = m.arch >= 100  ? first_fit(kSpeedIntraSm100, max_bw)
                         : m.arch >= 90 ? first_fit(kSpeedIntraSm90, max_bw)
                                        : first_fit(kSpeedIntra, max_bw);
    g.channels = std::max(1, std::min(32, static_cast<int>(total / speed + 1e-9)));
    g.bw = speed;
  } else {
    // Across nodes every channel leaves through one NIC, at the slower of its PCIe path
    // and the NIC: one channel per NIC, and the search stops once the channels carry the
    // GPU's NVLink total (search.cc: nChannels x bwInter >= totalBw; an NVLink domain of
    // 72 GPUs has more NICs than that).
    const double max_bw = std::min(m.pcie, m.nic);
    g.bw = m.arch >= 90 ? first_fit(kSpeedInterSm90, max_bw) : first_fit(kSpeedInter, max_bw);
    if (g.bw > max_bw) g.bw = max_bw;  // slower than every listed speed (a socket NIC)
    g.channels = m.nics_per_node;
    if (m.nvlink > 0) g.channels = std::min(g.channels, static_cast<int>(std::ceil(m.nvlink / g.bw - 1e-9)));
    g.channels = std::min(g.channels, 32);  // MAXCHANNELS / 2
  }
  const bool dup = g.bw >= 25 && !(m.arch > 80 && g.bw < 50 && g.channels > 4);
  if (dup) {
    g.channels = std::min(32, 2 * g.channels);
    g.bw /= 2;
  }
  return g;
}

int nccl_comm_channels(const NcclMachine& m) {
  // ncclTopoPostset: the graph's channels duplicated, cut to NCCL_MAX_NCHANNELS, then copies of
  // the first channels up to NCCL_MIN_NCHANNELS (max first, then min, as NCCL applies them).
  int c = std::min(64, 2 * nccl_ring_graph(m).channels);
  c = std::min(c, std::clamp(m.max_channels, 1, 64));
  return std::max(c, std::min(m.min_channels, 64));
}

NcclGraph nccl_nvls_graph(const NcclMachine& m) {
  // NCCL_NVLS_NCHANNELS' default channels (src/transport/nvls.cc: 16 on SM90, NVLS_NCHANNELS_SM100
  // 32 on SM100) over 16 NVLinks' worth into the switch: one NVLink each on Hopper, half of one on
  // Blackwell; across nodes they share the node's NICs (derived from search.cc, unverified:
  // docs/nccl_model.md).
  NcclGraph g;
  if (!m.nvls) return g;
  constexpr double kNvlsLinks = 16;
  g.channels = m.arch >= 100 ? 32 : 16;
  g.bw = kNvlsLinks * nvlink_per_link(m.arch) / g.channels;
  return g;
}

double nccl_bus_factor(NcclColl coll, int n) {
  const CollRow& c = kColls[idx(coll)];
  if (n <= 1 || c.chain) return 1;
  return static_cast<double>(c.passes) * (n - 1) / n;
}

namespace {

// Where a price starts, as NCCL's tuner sees it: the graph's channels, the tuner's latencies.
// False where `a` cannot run `coll` with `p` on `m` (the collective, the protocol, what the
// machine has).
// `nvls_eff` scales the NVLS graph's NVLink side only (the clock's switch efficiency; NICs
// keep their rate).
bool start_pricing(const NcclMachine& m, NcclColl coll, double bytes, NcclAlgo a, NcclProto p, Pricing* c,
                   double nvls_eff = 1.0) {
  const AlgoRow& algo = row(a);
  const ProtoRow& proto = row(p);
  if (!(algo.colls & bit(coll)) || (algo.simple_only && p != NcclProto::kSimple) || !algo.fits(m) ||
      m.arch < proto.min_arch)
    return false;
  const CollRow& cr = kColls[idx(coll)];
  const int n = m.ranks(), gi = gen_index(m.arch), ni = node_index(m.nodes);
  *c = Pricing{&m, coll, p, bytes};
  c->nsteps = cr.chain ? n : cr.passes * (n - 1);
  c->gi = gi;
  c->ni = ni;
  c->ll_max = kLLMaxBw[m.nodes == 1 ? gi : (m.amd_cpu ? 1 : 0)][ni];
  const NcclGraph ring = nccl_ring_graph(m);
  c->nch = ring.channels;
  c->bw_ch = ring.bw;
  if (algo.graph != Graph::kRing) {
    const NcclGraph nv = nccl_nvls_graph(m);
    c->nch = nv.channels;
    const double inter = m.nodes > 1 ? std::min(m.pcie, m.nic) * m.nics_per_node / nv.channels : nv.bw;
    const double intra = nv.bw * nvls_eff;
    c->bw_ch = algo.graph == Graph::kNvls ? std::min(intra, inter) : std::min(intra, m.nodes <= 2 ? inter : inter / 2);
  }
  c->cap_ch = c->nch;
  c->intra = (m.nvlink > 0 ? algo.nvlink : algo.pci)[idx(p)];
  c->own_net = algo.net[idx(p)];
  c->inter = m.ranks_per_node == 1 ? row(NcclAlgo::kTree).net[idx(p)] : c->own_net;
  c->overhead = m.nodes > 1 ? (m.amd_cpu ? 2.0 : 1.0) * proto.net_overhead : 0;
  c->base = algo.base[idx(p)];
  return true;
}

// NCCL's estimate in us for one (algorithm, protocol), what its tuner compares to choose
// (tuning.cc L530-L547), or < 0 where it cannot run. One rank: the ring alone, in no time.
double estimate_us(const NcclMachine& m, NcclColl coll, double bytes, NcclAlgo a, NcclProto p) {
  if (m.ranks() == 1) return a == NcclAlgo::kRing ? 0 : -1;
  Pricing c;
  if (!start_pricing(m, coll, bytes, a, p, &c)) return -1;
  const double alg_bw = row(a).alg_bw(c);
  if (alg_bw <= 0) return -1;
  return row(a).latency_us(c) + bytes / (1000.0 * alg_bw);
}

// The time in us the simulation charges for a call NCCL chose, or < 0 where it cannot run:
// the tuner's latencies and bandwidths, with the channels the job set, an LL128 step through
// NVSwitch as measured, NVLS as it moves and waits, and nccl-tests' single-thread launch as a
// floor under the latency.
double clock_us(const NcclMachine& m, NcclColl coll, double bytes, NcclAlgo a, NcclProto p) {
  if (m.ranks() == 1) return a == NcclAlgo::kRing ? 0 : -1;
  Pricing c;
  const AlgoRow& algo = row(a);
  const double switch_eff = algo.graph != Graph::kRing ? nvls_switch_efficiency(m.arch) : 1.0;
  if (!start_pricing(m, coll, bytes, a, p, &c, switch_eff)) return -1;
  // The tuner reads the search graph's channels (init.cc searches with MAXCHANNELS / 2 before
  // ncclTopoPostset honours NCCL_MIN/MAX_NCHANNELS), so NCCL's choice does not see those
  // variables. The clock does: each graph channel runs as two of the communicator's, so its
  // per-channel caps count communicator channels / 2 (the same number unless the variables are
  // set), and fewer channels than that carry proportionally less.
  if (algo.comm_channels) {
    c.cap_ch = nccl_comm_channels(m) / 2.0;
    c.bw_ch *= std::min(1.0, c.cap_ch / c.nch);
  }
  if (m.nvswitch && row(p).switch_step_us > 0) c.intra = row(p).switch_step_us;
  double alg_bw = algo.alg_bw(c);
  if (alg_bw <= 0) return -1;
  double lat = algo.latency_us(c);
  const double floor = launch_floor_us(m);
  if (a == NcclAlgo::kNvls && c.allreduce() && m.nodes == 1) {
    const NcclGraph nv = nccl_nvls_graph(m);
    return nvls_one_node_us(bytes, m.ranks_per_node, nv.channels, nv.bw * switch_eff, lat, floor);
  }
  // The network share is the allreduce kernel's split of its warps (all_reduce.h).
  if (algo.graph != Graph::kRing && m.nodes > 1 && c.allreduce()) alg_bw *= kNvlsNetworkShare;
  lat = std::max(lat, floor);
  const double fill = a == NcclAlgo::kNvlsTree ? nvls_tree_fill_us(c, alg_bw) : 0;
  return lat + bytes / (1000.0 * alg_bw) + fill;
}

// Channels a call of `bytes` runs on (enqueue.cc L1751-L1792): the communicator's (twice
// the graph's unless NCCL_MIN/MAX_NCHANNELS say otherwise), fewer while each thread would get
// less than its threshold.
int call_channels(const NcclMachine& m, double bytes, NcclProto p) {
  const ProtoRow& proto = row(p);
  const double threshold = proto.thread_bytes_per_rank ? proto.thread_bytes * m.ranks() : proto.thread_bytes;
  int nc = nccl_comm_channels(m);
  while (nc > 1 && bytes < nc * proto.threads * threshold) --nc;
  return nc;
}

// An untuned collective (alltoall) is grouped send/recv: each rank sends (n-1)/n of its
// buffer, its own node's share over NVLink and the rest through its share of the NICs, all
// peers at once, after one network hop (or NVLink hop) of the ring's Simple protocol.
double p2p_transfer_us(const NcclMachine& m, double bytes) {
  const int n = m.ranks(), ppn = m.ranks_per_node;
  const double per_peer = bytes / n;
  const double intra_bw = m.nvlink > 0 ? m.nvlink : m.pcie;
  const double nic_bw = std::min(m.pcie, m.nic) * m.nics_per_node / ppn;
  const double t_intra = per_peer * (ppn - 1) / (1000.0 * intra_bw);
  const double t_inter = per_peer * (n - ppn) / (1000.0 * nic_bw);
  return std::max(t_intra, t_inter);
}
double p2p_latency_us(const NcclMachine& m) {
  const AlgoRow& ring = row(NcclAlgo::kRing);
  const size_t simple = idx(NcclProto::kSimple);
  const double nvlink_lat = ring.base[simple] + ring.nvlink[simple];
  return m.nodes > 1 ? ring.base[simple] + ring.net[simple] : nvlink_lat;
}
NcclCall p2p_call(const NcclMachine& m, double bytes, const NcclSettings& s) {
  NcclCall call;
  const bool one = m.ranks() == 1;
  call.tuner_us = one ? 0 : p2p_latency_us(m) + p2p_transfer_us(m, bytes);
  const double clock = one ? 0 : std::max(launch_floor_us(m), p2p_latency_us(m)) + p2p_transfer_us(m, bytes);
  call.seconds = std::max(m.launch_s, clock * 1e-6);
  call.channels = nccl_comm_channels(m);
  // No NCCL_ALGO chooses grouped send/receive, and it runs Simple.
  call.ok = !s.algo && (!s.proto || *s.proto == NcclProto::kSimple);
  return call;
}

}  // namespace

NcclCall nccl_call(const NcclMachine& m, NcclColl coll, size_t size, const NcclSettings& s) {
  const double bytes = static_cast<double>(size);
  if (!kColls[idx(coll)].tuned) return p2p_call(m, bytes, s);
  NcclCall best;
  double t_best = std::numeric_limits<double>::infinity();
  int best_id = 0;
  for (const AlgoRow& algo : kAlgos) {
    if (s.algo && *s.algo != algo.algo) continue;
    for (const ProtoRow& proto : kProtos) {
      if (s.proto && *s.proto != proto.proto) continue;
      const double t = estimate_us(m, coll, bytes, algo.algo, proto.proto);
      // NCCL's argmin: the cheapest; on a tie the first in NCCL's order (its ids, then protocols).
      if (t < 0 || t > t_best || (t == t_best && algo.nccl_id >= best_id)) continue;
      t_best = t;
      best_id = algo.nccl_id;
      best.algo = algo.algo;
      best.proto = proto.proto;
      best.tuner_us = t;
      best.channels = algo.graph != Graph::kRing ? nccl_nvls_graph(m).channels : call_channels(m, bytes, proto.proto);
      best.ok = true;
    }
  }
  // NCCL chooses by its tuner; the call takes the clock's time. Calls issued back to back (as
  // nccl-tests and a training step issue them) overlap a launch with the kernel before it:
  // a call costs its kernel, and never less than the launch floor.
  if (best.ok) best.seconds = std::max(m.launch_s, clock_us(m, coll, bytes, best.algo, best.proto) * 1e-6);
  return best;
}

}  // namespace hvd::sim
