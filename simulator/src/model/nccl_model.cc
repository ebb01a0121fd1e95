// NCCL 2.26's tuner (src/graph/tuning.cc), its topology search's channel counts
// (src/graph/search.cc) and its per-call channel choice (src/enqueue.cc), over the links of a
// modelled machine, and the clock the chosen call runs on. Every tuner constant below is
// NCCL's, quoted with its source line in ../shared/reference/nccl-facts.json; the clock's own
// (the single-thread launch of nccl-tests -g, NVLS's loop, its share across nodes, NVLS tree's
// fill) are measured or derived; docs/nccl_model.md says where the model departs.
#include "hvd/sim/nccl_model.h"

#include <strings.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <utility>
#include <vector>

#include "hvd/workloads/gpu_catalog.h"

namespace hvd::sim {
namespace {

constexpr int kLL = 0, kLL128 = 1, kSimple = 2;
constexpr int kTree = 0, kRing = 1, kCollnet = 2, kNvls = 3, kNvlsTree = 4;  // rows below

// Latencies in us (tuning.cc L118-L142): base per algorithm, and per hop by link class.
constexpr double kBaseLat[5][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
constexpr double kHwLatNvlink[5][3] = {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 25}, {0, 0, 25}};
constexpr double kHwLatPci[5][3] = {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 0}, {0, 0, 0}};
constexpr double kHwLatNet[5][3] = {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 18}, {0, 0, 14}};
// Bandwidth caps in GB/s (tuning.cc L144-L175): rows Volta, Ampere, Hopper; columns 1, 2,
// more nodes. llMaxBws' rows are the GPU generation on one node and the CPU vendor across
// nodes (row 0 Intel, row 1 AMD).
constexpr double kLLMaxBw[3][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}};
constexpr double kPerChMaxRingLL128Bw[3][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}};
constexpr double kPerChMaxTreeLL128Bw[3][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}};
constexpr double kPerChMaxTreeBw[3][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}};
// Tree allreduce bandwidth correction by log2(bytes / 64) (tuning.cc L522-L528).
constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.9, 0.9, 0.9, 1.0, 1.0},
    {0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7, 0.7, 0.8, 0.9, 0.9}};
// Per-channel search speeds in GB/s (search.cc L17-L53): the first that fits is taken.
constexpr double kSpeedIntra[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0};
constexpr double kSpeedIntraSm90[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
constexpr double kSpeedInter[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                  7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr double kSpeedInterSm90[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                      15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
// The clock takes NCCL's own latencies (the tuner's, which NVIDIA sets from nccl-tests with one
// thread per GPU: NVIDIA/nccl-tests#123), as a job with one process per GPU sees them; checked
// against NVIDIA's one-process-per-GPU sample on 8 H100 (13.0-13.7 us at 8 B; the tuner's 15.0).
// nccl-tests with one host thread driving several GPUs (-g N) adds the thread's launching of
// their kernels in turn: the call cannot end before the last GPU's kernel runs, and the
// protocol's own latency passes while the thread launches. Measured: DGX A100, all_reduce_perf
// -g N, ring, one channel, LL, 8-128 B (NVIDIA/nccl-tests#123: 10.0, 13.76, 16.88, 20.8, 25.2,
// 29.5, 33.7 us for 2..8 GPUs), a line of 5.56 us + 3.96 us per GPU after the first (residuals
// under 0.61 us); NVIDIA's reply there: the CPU is the bottleneck.
// An LL128 step through NVSwitch: the tuner's 1.9 us is twice what one thread per GPU measures
// (DGX A100, nccl-tests -t N, NCCL_PROTO=LL128, one channel: ~20..~32 us for 2..8 GPUs, 1.0 us a
// step; NVIDIA/nccl-tests#123), and the published one-node H100 ring's LL128 sizes (4-32 MiB)
// leave at most 1.4 us a step beside the tuner's base latency.
constexpr double kLL128SwitchStepUs = 1.0;
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
// different kernel and cluster) at 483 against NVIDIA's 480 (docs/nccl_model.md).
constexpr double kNvlsNetworkShare = 0.91;
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
  const double heads = ppn, ops = nch * heads;
  const double chunk = nvls_chunk(128 * 1024, bytes, ops, {{64, 65536}, {8, 32768}, {2, 16384}});
  const double rate = 1000.0 * link_gbps * heads / (heads + 1);  // bytes per us per channel
  const double loops = bytes / (ops * chunk);
  const double waits = (std::ceil(loops) + 1) * kHwLatNvlink[kRing][kSimple];
  return std::max(floor_us, lat_us + waits) + (loops + 1) * heads * chunk / rate;
}
// NVLink per link as NCCL counts it (topo.h L13-L34), by generation.
double nvlink_per_link(int arch) { return arch >= 90 ? 20.6 : arch >= 70 ? 20.0 : 18.0; }

int gen_index(int arch) { return arch >= 90 ? 2 : arch >= 80 ? 1 : 0; }
int node_index(int nodes) { return nodes <= 2 ? nodes - 1 : 2; }
int log2i(double x) { return x < 1 ? 0 : static_cast<int>(std::floor(std::log2(x))); }

template <size_t N>
double first_fit(const double (&speeds)[N], double max_bw) {
  for (double s : speeds)
    if (s <= max_bw) return s;
  return speeds[N - 1];
}

}  // namespace

const char* nccl_algo_name(NcclAlgo a) {
  switch (a) {
    case NcclAlgo::kRing: return "ring";
    case NcclAlgo::kTree: return "tree";
    case NcclAlgo::kNvls: return "nvls";
    case NcclAlgo::kNvlsTree: return "nvls_tree";
    case NcclAlgo::kCollnet: return "collnet";
  }
  return "?";
}
const char* nccl_proto_name(NcclProto p) { return p == NcclProto::kLL ? "LL" : p == NcclProto::kLL128 ? "LL128" : "Simple"; }
const char* nccl_coll_name(NcclColl c) {
  static const char* names[] = {"allreduce", "allgather", "reducescatter", "broadcast", "alltoall"};
  return names[static_cast<int>(c)];
}
bool parse_nccl_coll(const std::string& name, NcclColl* out) {
  for (int i = 0; i < 5; ++i)
    if (name == nccl_coll_name(static_cast<NcclColl>(i))) return *out = static_cast<NcclColl>(i), true;
  return false;
}

StatusOr<NcclMachine> nccl_machine(const ClusterSpec& c, int np) {
  auto gpu = workloads::find_gpu(c.gpu);
  if (!gpu.ok()) return Status::InvalidArgument("cluster.gpu: " + gpu.error());
  const workloads::GpuSpec& g = gpu.value();
  NcclMachine m;
  m.ranks_per_node = std::min(np, c.gpus_per_node);
  m.nodes = (np + c.gpus_per_node - 1) / c.gpus_per_node;
  if (m.nodes > c.nodes) return Status::InvalidArgument("--np " + std::to_string(np) + ": the cluster has " + std::to_string(c.gpus()) + " GPUs");
  const std::string& n = g.name;
  m.arch = n.rfind("H1", 0) == 0 || n.rfind("H2", 0) == 0 ? 90 : n.rfind("A1", 0) == 0 ? 80 : n.rfind("V1", 0) == 0 ? 70 : 60;
  if (c.intra.type == "nvlink" && g.nvlink_gbps > 0) {
    // The catalogue's per-direction total is 25 GB/s per link (NVLink 2-4 signalling).
    const double links = std::round(g.nvlink_gbps / 25.0);
    m.nvlink = links * nvlink_per_link(m.arch);
    m.nvswitch = m.arch >= 80;  // DGX A100/H100 boards; V100 (DGX-1) is a hybrid cube mesh
    m.nvls = m.arch >= 90;
  }
  // GPU <-> NIC over PCIe x16: NCCL's width x rate / 80 (Gen3 12, Gen4 24, Gen5 48 GB/s).
  m.pcie = g.pcie_gbps >= 60 ? 48 : g.pcie_gbps >= 30 ? 24 : 12;
  m.nic = c.network.bandwidth * c.network.effective_efficiency() / 1e9;
  m.nics_per_node = c.network.nic == "per_gpu" ? c.gpus_per_node : 1;
  m.collnet = c.network.sharp;
  m.amd_cpu = c.host_cpu == "amd";
  // NCCL's model is of a non-blocking fabric (a star, or a fat tree without oversubscription,
  // as DGX pods are cabled): other fabrics are refused, not priced as if they were one.
  const NetworkSpec& net = c.network;
  if (!c.platform_file.empty())
    return Status::InvalidArgument("cluster.platform_file: NCCL's collectives (runtime.gpu_operations \"nccl\") are "
                                   "modelled on the scenario's own cluster, not on a platform file");
  if (m.nodes > 1 && (net.topology == "torus" || net.topology == "dragonfly" ||
                      (net.topology == "fat_tree" && net.oversubscription > 1)))
    return Status::InvalidArgument("cluster.network.topology: NCCL's collectives (runtime.gpu_operations \"nccl\") are "
                                   "modelled on a non-blocking fabric (star, or fat_tree with oversubscription 1), not on " +
                                   net.topology + (net.topology == "fat_tree" ? " with oversubscription" : ""));
  // A degraded link slows every channel that crosses it, and every ring and tree crosses
  // every GPU of the job and every node's NICs: the slowest of the job's links sets the rate
  // (NCCL's topology search sees a NIC or an NVLink trained at a lower speed too).
  // Factors per node's NICs and per GPU link (as the platform applies them: each entry
  // multiplies), then the slowest of the job's.
  std::vector<double> nics(static_cast<size_t>(m.nodes), 1.0), links(static_cast<size_t>(m.ranks()), 1.0);
  for (const LinkDegradation& d : c.degraded_links) {
    if (d.node >= m.nodes || d.gpu >= m.ranks_per_node) continue;
    if (d.extra_latency > 0)
      return Status::InvalidArgument("cluster.degraded_links: extra_latency is not modelled for NCCL's collectives "
                                     "(runtime.gpu_operations \"nccl\"; NCCL's tuner prices each hop), bandwidth_factor is");
    (d.gpu < 0 ? nics[static_cast<size_t>(d.node)] : links[static_cast<size_t>(d.node * m.ranks_per_node + d.gpu)]) *=
        d.bandwidth_factor;
  }
  const double nic_factor = *std::min_element(nics.begin(), nics.end());
  const double gpu_factor = *std::min_element(links.begin(), links.end());
  m.nic *= nic_factor;
  if (gpu_factor < 1) {  // the GPU's link inside the server, at its real rate
    (m.nvlink > 0 ? m.nvlink : m.pcie) *= gpu_factor;
    m.slow_gpu_link = (m.nvlink > 0 ? g.nvlink_gbps : g.pcie_gbps) * gpu_factor;
  }
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
    const double speed = m.arch >= 90 ? first_fit(kSpeedIntraSm90, max_bw) : first_fit(kSpeedIntra, max_bw);
    g.channels = std::max(1, std::min(32, static_cast<int>(total / speed + 1e-9)));
    g.bw = speed;
  } else {
    // Across nodes every channel leaves through one NIC, at the slower of its PCIe path
    // and the NIC: one channel per NIC.
    const double max_bw = std::min(m.pcie, m.nic);
    g.bw = m.arch >= 90 ? first_fit(kSpeedInterSm90, max_bw) : first_fit(kSpeedInter, max_bw);
    if (g.bw > max_bw) g.bw = max_bw;  // slower than every listed speed (a socket NIC)
    g.channels = m.nics_per_node;
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
  // 16 channels, each one NVLink's worth into the switch; across nodes they share the
  // node's NICs (derived from search.cc, unverified: docs/nccl_model.md).
  NcclGraph g;
  if (!m.nvls) return g;
  g.channels = 16;
  g.bw = nvlink_per_link(m.arch);
  return g;
}

double nccl_bus_factor(NcclColl coll, int n) {
  if (n <= 1) return 1;
  switch (coll) {
    case NcclColl::kAllreduce: return 2.0 * (n - 1) / n;
    case NcclColl::kBroadcast: return 1;
    default: return static_cast<double>(n - 1) / n;
  }
}

namespace {

// The tuner's estimate in us for one (algorithm, protocol), or < 0 where it cannot run. With
// `clock`, the time the call takes: the same latencies and bandwidths, with the channels the
// job set, NVLS as it moves and waits, and nccl-tests' single-thread launch as a floor under
// the latency.
double algo_time(const NcclMachine& m, NcclColl coll, double bytes, int a, int p, bool clock) {
  const int n = m.ranks(), nodes = m.nodes, ppn = m.ranks_per_node;
  if (n == 1) return a == kRing ? 0 : -1;
  const bool ar = coll == NcclColl::kAllreduce, bcast = coll == NcclColl::kBroadcast;
  // Which algorithms serve which collective (tuning.cc L238-L248, L405-L443).
  if (bcast && a != kRing) return -1;
  if (!ar && !bcast && a != kRing && a != kNvls && a != kCollnet) return -1;
  if ((a == kNvls || a == kNvlsTree || a == kCollnet) && p != kSimple) return -1;
  if (a == kNvls && (!m.nvls || (nodes > 1 && !m.collnet))) return -1;
  if (a == kNvlsTree && (!m.nvls || nodes == 1)) return -1;
  if (a == kCollnet && (!m.collnet || !m.nvswitch || nodes == 1)) return -1;
  if (p == kLL128 && m.arch < 70) return -1;
  const NcclGraph ring = nccl_ring_graph(m);
  const NcclGraph nv = nccl_nvls_graph(m);
  const int gi = gen_index(m.arch), ni = node_index(nodes);
  const double ll_max = kLLMaxBw[nodes == 1 ? gi : (m.amd_cpu ? 1 : 0)][ni];
  // Bandwidth: channels x per-channel speed, then the protocol's caps.
  double bw_ch = ring.bw;
  int nch = ring.channels;
  if (a == kNvls || a == kNvlsTree) {
    nch = nv.channels;
    const double inter = nodes > 1 ? std::min(m.pcie, m.nic) * m.nics_per_node / nv.channels : nv.bw;
    bw_ch = a == kNvls ? std::min(nv.bw, inter) : std::min(nv.bw, nodes <= 2 ? inter : inter / 2);
  }
  // The tuner reads the search graph's channels (init.cc searches with MAXCHANNELS / 2 before
  // ncclTopoPostset honours NCCL_MIN/MAX_NCHANNELS), so NCCL's choice does not see those
  // variables. The clock does: each graph channel runs as two of the communicator's, so its
  // per-channel caps count communicator channels / 2 (the same number unless the variables are
  // set), and fewer channels than that carry proportionally less.
  double cap_ch = nch;
  if (clock && (a == kRing || a == kTree)) {
    cap_ch = nccl_comm_channels(m) / 2.0;
    bw_ch *= std::min(1.0, cap_ch / nch);
  }
  double bus = nch * bw_ch;
  if (a == kRing && p == kLL) bus = std::min(ll_max, bus * 0.5);
  if (a == kRing && p == kLL128) bus = std::min(bus * 0.92, cap_ch * kPerChMaxRingLL128Bw[gi][ni]);
  if (a == kTree && ar) bus = std::min(bus * 0.92, cap_ch * kPerChMaxTreeBw[gi][ni]);
  if (a == kTree && p == kLL) bus = std::min(bus / 3.8, ll_max);
  if (a == kTree && p == kLL128) bus = std::min(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), cap_ch * kPerChMaxTreeLL128Bw[gi][ni]);
  if (m.slow_gpu_link > 0) bus = std::min(bus, m.slow_gpu_link);  // each GPU's link carries the bus rate
  if (a == kCollnet) {
    double factor = static_cast<double>(ppn) / nch;
    factor -= (factor - 1) / 2;
    bus /= factor;
    if (m.arch >= 90) bus *= 0.85;
  }
  const int nsteps = ar ? 2 * (n - 1) : bcast ? n : n - 1;
  const double alg = bus * (a == kRing ? static_cast<double>(n) / nsteps : (a == kNvls || a == kNvlsTree) ? 5.0 / 6.0 : 0.5);
  // Latency.
  const auto& intra_hw = m.nvlink > 0 ? kHwLatNvlink : kHwLatPci;
  const double intra = clock && m.nvswitch && p == kLL128 && (a == kRing || a == kTree) ? kLL128SwitchStepUs : intra_hw[a][p];
  const double inter = (ppn == 1 ? kHwLatNet[kTree][p] : kHwLatNet[a][p]);
  const double overhead = nodes > 1 ? (m.amd_cpu ? 2.0 : 1.0) * (p == kSimple ? 3 : 1) : 0;
  double lat = kBaseLat[a][p];
  if (a == kRing && bcast) {
    lat += nodes > 1 ? kHwLatNet[kRing][p] : intra;  // one ring order for every channel
  } else if (a == kRing) {
    const int inter_steps = nodes == 1 ? 0 : ar ? 2 * (nodes - 1) : nodes - 1;
    lat += (nsteps - inter_steps) * std::max(intra, overhead) + inter_steps * inter;
  } else if (a == kTree) {
    lat += 2 * ((ppn - 1) * intra + log2i(nodes) * inter);
  } else if (a == kCollnet) {
    lat += 2 * (std::min(1, ppn - 1) * intra + (ppn - 1) * 0.4) + inter;
  } else if (a == kNvls) {
    lat = intra + (nodes > 1 ? inter : 0);
  } else {
    lat += intra + 2 * log2i(nodes) * inter;
  }
  // Time (tuning.cc L530-L547).
  if (a == kTree && ar) {
    const int i = log2i(bytes / 64);
    if (bytes >= 64 && i < 23) bus *= kTreeCorrection[p][i];
  }
  double alg_bw = a == kTree && ar ? bus * 0.5 : alg;
  if (clock && a == kNvls && ar && nodes == 1 && alg_bw > 0)
    return nvls_one_node_us(bytes, ppn, nv.channels, nv.bw, lat, launch_floor_us(m));
  if (clock && nodes > 1 && (a == kNvls || a == kNvlsTree)) alg_bw *= kNvlsNetworkShare;
  if (alg_bw <= 0) return -1;
  if (a == kRing && p == kSimple && ar && nodes > 1 && bytes / (2.0 * nch * n) >= 64) lat *= m.arch >= 80 ? 1.4 : 1.9;
  if (clock) lat = std::max(lat, launch_floor_us(m));
  double fill = 0;
  if (clock && a == kNvlsTree) {
    const double heads = ppn, ops = nch * heads;
    const double chunk = nvls_chunk(nodes >= 4 ? 64 * 1024 : 128 * 1024, bytes, ops, {{4, 65536}, {1, 32768}});
    fill = kNvlsTreeFillLoops * heads * chunk / (1000.0 * alg_bw / nch);
  }
  return lat + bytes / (1000.0 * alg_bw) + fill;
}

// Channels a call of `bytes` runs on (enqueue.cc L1751-L1792): the communicator's (twice
// the graph's unless NCCL_MIN/MAX_NCHANNELS say otherwise), fewer while each thread would get
// less than its threshold.
int call_channels(const NcclMachine& m, double bytes, int p) {
  const int threads = p == kLL128 ? 640 : 512;
  const double threshold = p == kLL ? 8.0 * m.ranks() : p == kLL128 ? 8 : 64;
  int nc = nccl_comm_channels(m);
  while (nc > 1 && bytes < nc * threads * threshold) --nc;
  return nc;
}

// An alltoall is grouped send/recv, not a tuned collective: each rank sends (n-1)/n of its
// buffer, its own node's share over NVLink and the rest through its share of the NICs, all
// peers at once. Latency: one network hop (or NVLink hop) of the Simple protocol.
double alltoall_us(const NcclMachine& m, double bytes, bool clock) {
  const int n = m.ranks(), ppn = m.ranks_per_node;
  if (n == 1) return 0;
  const double per_peer = bytes / n;
  const double intra_bw = m.nvlink > 0 ? m.nvlink : m.pcie;
  const double nic_bw = std::min(m.pcie, m.nic) * m.nics_per_node / ppn;
  const double t_intra = per_peer * (ppn - 1) / (1000.0 * intra_bw);
  const double t_inter = per_peer * (n - ppn) / (1000.0 * nic_bw);
  const double nvlink_lat = kBaseLat[kRing][kSimple] + kHwLatNvlink[kRing][kSimple];
  const double own = m.nodes > 1 ? kBaseLat[kRing][kSimple] + kHwLatNet[kRing][kSimple] : nvlink_lat;
  const double lat = clock ? std::max(launch_floor_us(m), own) : own;
  return lat + std::max(t_intra, t_inter);
}

}  // namespace

bool nccl_proto_matches(const std::string& proto, NcclProto p) {
  return proto == "auto" || strcasecmp(proto.c_str(), nccl_proto_name(p)) == 0;
}

NcclCall nccl_call(const NcclMachine& m, NcclColl coll, size_t size, const std::string& algo, const std::string& proto) {
  NcclCall best;
  const double bytes = static_cast<double>(size);
  if (coll == NcclColl::kAlltoall) {
    best.tuner_us = alltoall_us(m, bytes, false);
    best.seconds = std::max(m.launch_s, alltoall_us(m, bytes, true) * 1e-6);
    best.channels = nccl_comm_channels(m);
    // NCCL's alltoall is grouped send/receive: no NCCL_ALGO chooses it, and it runs Simple.
    best.ok = algo == "auto" && nccl_proto_matches(proto, NcclProto::kSimple);
    return best;
  }
  double t_best = std::numeric_limits<double>::infinity();
  int best_a = -1;
  const int algos[] = {kTree, kRing, kCollnet, kNvls, kNvlsTree};
  for (int a : algos) {
    const NcclAlgo name = a == kTree      ? NcclAlgo::kTree
                          : a == kRing    ? NcclAlgo::kRing
                          : a == kCollnet ? NcclAlgo::kCollnet
                          : a == kNvls    ? NcclAlgo::kNvls
                                          : NcclAlgo::kNvlsTree;
    if (algo != "auto" && algo != nccl_algo_name(name)) continue;
    for (int p = kLL; p <= kSimple; ++p) {
      if (!nccl_proto_matches(proto, static_cast<NcclProto>(p))) continue;
      const double t = algo_time(m, coll, bytes, a, p, false);
      if (t < 0 || t >= t_best) continue;
      t_best = t;
      best_a = a;
      best.algo = name;
      best.proto = static_cast<NcclProto>(p);
      best.tuner_us = t;
      best.channels = a == kNvls || a == kNvlsTree ? nccl_nvls_graph(m).channels : call_channels(m, bytes, p);
      best.ok = true;
    }
  }
  // NCCL chooses by its tuner; the call takes the clock's time. Calls issued back to back (as
  // nccl-tests and a training step issue them) overlap a launch with the kernel before it:
  // a call costs its kernel, and never less than the launch floor.
  if (best.ok) best.seconds = std::max(m.launch_s, algo_time(m, coll, bytes, best_a, static_cast<int>(best.proto), true) * 1e-6);
  return best;
}

}  // namespace hvd::sim
