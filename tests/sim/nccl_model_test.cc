// NCCL's data path as the simulator models it (hvd/sim/nccl_model.h) against published
// nccl-tests figures (NVIDIA GTC 2024 S62129, togethercomputer/together-nccl-tests, NVIDIA's
// nccl and nccl-tests issues; docs/nccl_model.md has the table and the sources). Each test
// prints its rows: model, published, error.
#include "hvd/sim/nccl_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace hvd::sim {
namespace {

constexpr double kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;

ClusterSpec dgx(const std::string& gpu, int nodes, double nic_gbps, const std::string& nic = "per_gpu") {
  ClusterSpec c;
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.gpu = gpu;
  c.intra.type = "nvlink";
  c.network.bandwidth = nic_gbps * 1e9 / 8;
  c.network.nic = nic;
  c.network.protocol = "infiniband";
  c.host_cpu = gpu == "A100" ? "amd" : "intel";
  return c;
}

// NCCL_ALGO / NCCL_PROTO as a job sets them, by name ("auto": not set).
NcclSettings nccl(const std::string& algo, const std::string& proto = "auto") {
  NcclSettings s;
  NcclAlgo a;
  NcclProto p;
  if (algo != "auto") {
    EXPECT_TRUE(parse_nccl_algo(algo, &a)) << algo;
    s.algo = a;
  }
  if (proto != "auto") {
    EXPECT_TRUE(parse_nccl_proto(proto, &p)) << proto;
    s.proto = p;
  }
  return s;
}

// nccl-tests' bus bandwidth of one call, GB/s.
double busbw(const NcclMachine& m, NcclColl coll, double bytes, const std::string& algo, NcclCall* out = nullptr,
             const std::string& proto = "auto") {
  const NcclCall c = nccl_call(m, coll, static_cast<size_t>(bytes), nccl(algo, proto));
  if (out) *out = c;
  EXPECT_TRUE(c.ok) << algo;
  return bytes / c.seconds / 1e9 * nccl_bus_factor(coll, m.ranks());
}

// Prints the row; asserts it within `tolerance` (< 0: printed only, a known gap that
// docs/nccl_model.md explains).
void check(const char* what, double model, double published, double tolerance) {
  const double err = model / published - 1;
  std::printf("%-44s model %7.1f  published %7.1f  %+6.1f %%%s\n", what, model, published, 100 * err,
              tolerance < 0 ? "  (gap)" : "");
  if (tolerance >= 0) {
    EXPECT_LE(std::fabs(err), tolerance) << what;
  }
}

NcclMachine machine(const ClusterSpec& c, int np) {
  auto m = nccl_machine(c, np);
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return m.ok() ? *m : NcclMachine{};
}

// The same, as nccl-tests runs it with one host thread driving every GPU of the node (-g N).
NcclMachine one_thread(const ClusterSpec& c, int np) {
  NcclMachine m = machine(c, np);
  m.gpus_per_thread = m.ranks_per_node;
  return m;
}

// NVIDIA's reference large-message allreduce bus bandwidths (GTC 2024 S62129), 4 GiB.
TEST(NcclModel, NvidiaReferenceBusBandwidths) {
  const double s = 4 * kGiB;
  check("1 node V100 NVLink2 ring", busbw(machine(dgx("V100", 1, 100), 8), NcclColl::kAllreduce, s, "ring"), 122, 0.10);
  check("1 node A100 NVLink3 ring", busbw(machine(dgx("A100", 1, 200), 8), NcclColl::kAllreduce, s, "ring"), 232, 0.10);
  check("1 node H100 NVLink4 ring", busbw(machine(dgx("H100", 1, 400), 8), NcclColl::kAllreduce, s, "ring"), 370, 0.10);
  check("1 node H100 NVLS", busbw(machine(dgx("H100", 1, 400), 8), NcclColl::kAllreduce, s, "nvls"), 480, 0.10);
  check("4 x DGX A100, 8 x HDR 200G, ring", busbw(machine(dgx("A100", 4, 200), 32), NcclColl::kAllreduce, s, "ring"), 192, 0.10);
  check("4 x DGX H100, 8 x NDR 400G, ring", busbw(machine(dgx("H100", 4, 400), 32), NcclColl::kAllreduce, s, "ring"), 380, 0.10);
  check("2 x 8 H100, one 400G NIC each, ring", busbw(machine(dgx("H100", 2, 400, "per_server"), 16), NcclColl::kAllreduce, s, "ring"), 48, 0.10);
  check("2 x 8 A100, one 200G NIC each, ring", busbw(machine(dgx("A100", 2, 200, "per_server"), 16), NcclColl::kAllreduce, s, "ring"), 24, 0.10);
  // With InfiniBand SHARP NCCL runs NVLS across nodes, at the share of the one-node NVLS rate
  // measured on two nodes of NVLS tree (NvlsAcrossNodesFromTwoNodeNvlsTree): not set from this point.
  ClusterSpec sharp = dgx("H100", 4, 400);
  sharp.network.sharp = true;
  NcclCall c;
  const double sharp_bw = busbw(machine(sharp, 32), NcclColl::kAllreduce, s, "auto", &c);
  EXPECT_EQ(c.algo, NcclAlgo::kNvls);
  check("4 x DGX H100 + SHARP, auto (nvls)", sharp_bw, 480, 0.10);
  ClusterSpec tcp = dgx("A100", 2, 100, "per_server");
  tcp.network.protocol = "tcp";
  check("2 x 8 A100, one 100GbE NIC, TCP sockets", busbw(machine(tcp, 16), NcclColl::kAllreduce, s, "ring"), 10, 0.10);
}

// nccl-tests' single-thread launch comes from this series (nccl-tests on a DGX A100 with one
// thread driving every GPU, -g N, NCCL_ALGO=Ring, one channel, LL, 8-128 B; NVIDIA/nccl-tests#123):
// the line through it stays within 0.7 us of every point. With one process per GPU the same
// calls take NCCL's own latency, 7.8-15.0 us.
TEST(NcclModel, SingleThreadLaunchFromDgxA100Latencies) {
  const double measured_us[] = {10.0, 13.76, 16.88, 20.8, 25.2, 29.5, 33.7};
  for (int gpus = 2; gpus <= 8; ++gpus) {
    const NcclCall c = nccl_call(one_thread(dgx("A100", 1, 200), gpus), NcclColl::kAllreduce, 128, nccl("ring"));
    char what[64];
    std::snprintf(what, sizeof what, "A100 x%d ring 128 B -g %d time us (%s)", gpus, gpus, nccl_proto_name(c.proto));
    EXPECT_EQ(c.proto, NcclProto::kLL);
    const double want = measured_us[gpus - 2];
    check(what, c.seconds * 1e6, want, 0.7 / want);
    const NcclCall own = nccl_call(machine(dgx("A100", 1, 200), gpus), NcclColl::kAllreduce, 128, nccl("ring"));
    EXPECT_LT(own.seconds, c.seconds);
    EXPECT_NEAR(own.seconds * 1e6, 6.6 + 2 * (gpus - 1) * 0.6, 0.05);  // the tuner's LL ring latency
  }
}

// One process per GPU on 8 H100 SXM (NVIDIA/dgxc-benchmarking, nccl/README.md, sample
// all_reduce_perf output, `nThread 1 nGpus 1`, eight processes, default algorithm): the small
// sizes run ring/LL under any NCCL choice, and NCCL's tuner takes NVLS from 2 MiB (the run
// reached 480 GB/s at 8 GiB, so NVLS was on). From NCCL's own latencies: below 1 MiB within
// 30 % (the criterion for the small-message floor), from 1 MiB within 10 %.
TEST(NcclModel, OneNodeH100OneProcessPerGpu) {
  const NcclMachine m = machine(dgx("H100", 1, 400), 8);
  const double pub[][2] = {{8, 13.67},         {1024, 16.94},    {32 * kKiB, 19.33}, {512 * kKiB, 20.66},
                           {1 * kMiB, 27.37}, {2 * kMiB, 42.21}, {4 * kMiB, 54.19}};
  for (const auto& [bytes, us] : pub) {
    const NcclCall c = nccl_call(m, NcclColl::kAllreduce, static_cast<size_t>(bytes));
    EXPECT_EQ(c.algo, bytes < 2 * kMiB ? NcclAlgo::kRing : NcclAlgo::kNvls);
    EXPECT_EQ(c.proto, bytes < 2 * kMiB ? NcclProto::kLL : NcclProto::kSimple);
    char what[64];
    std::snprintf(what, sizeof what, "H100 x8 1 proc/GPU %7.0f B time us", bytes);
    check(what, c.seconds * 1e6, us, bytes < kMiB ? 0.30 : 0.10);
  }
}

// One node of 8 H100 SXM, NCCL 2.26.2, NCCL_ALGO=Ring, out of place (together-nccl-tests):
// within 10 % from 1 MiB and the flat small-message time (35 us) within 30 %, none of it
// fitted. 2 MiB is printed as a gap: NCCL's tuner, which the model follows, still takes LL
// there, and the published curve (2 MiB faster than 1 MiB) shows NCCL had left LL by then.
TEST(NcclModel, OneNodeH100RingCurve) {
  const NcclMachine m = one_thread(dgx("H100", 1, 400), 8);  // nThread 1 nGpus 8
  const double pub[][2] = {{1 * kMiB, 39.4},   {2 * kMiB, 87.3},   {4 * kMiB, 138.3},  {8 * kMiB, 182.4},
                           {16 * kMiB, 231.9}, {32 * kMiB, 274.5}, {64 * kMiB, 318.6}, {128 * kMiB, 334.3},
                           {256 * kMiB, 347.6}, {512 * kMiB, 355.7}, {kGiB, 360.1}, {2 * kGiB, 363.8},
                           {4 * kGiB, 366.7}, {8 * kGiB, 368.1}};
  for (const auto& [bytes, gbps] : pub) {
    NcclCall c;
    const double got = busbw(m, NcclColl::kAllreduce, bytes, "ring", &c);
    char what[64];
    std::snprintf(what, sizeof what, "H100 x8 ring %6.0f MiB (%s)", bytes / kMiB, nccl_proto_name(c.proto));
    check(what, got, gbps, bytes == 2 * kMiB ? -1 : 0.10);
  }
  for (double bytes : {8.0, 1024.0, 64 * kKiB, 256 * kKiB}) {
    const NcclCall c = nccl_call(m, NcclColl::kAllreduce, static_cast<size_t>(bytes), nccl("ring"));
    char what[64];
    std::snprintf(what, sizeof what, "H100 x8 ring %6.0f B time us (%s)", bytes, nccl_proto_name(c.proto));
    check(what, c.seconds * 1e6, 35, 0.30);
  }
}

// The same machine and NCCL, allgather and reduce-scatter rings (together-nccl-tests,
// 20260305_220043, all_gather_ring.out / reduce_scatter_ring.out; not used to set anything).
// Within 10 % from 256 MiB, 20 % below, and the single-thread floor (~35 us for every
// collective) within 30 %, but 4 MiB: NCCL's tuner keeps LL there (to 4.4 MiB for these
// 7-step rings), and the run had left it, as the allreduce ring had at 2 MiB.
TEST(NcclModel, OneNodeH100AllgatherReducescatterRings) {
  const NcclMachine m = one_thread(dgx("H100", 1, 400), 8);  // nThread 1 nGpus 8
  const struct { NcclColl coll; double pub[7]; } curves[] = {
      {NcclColl::kAllgather, {22.02, 88.77, 207.36, 278.45, 320.49, 344.53, 357.90}},
      {NcclColl::kReducescatter, {22.60, 88.02, 203.96, 284.43, 327.04, 346.49, 363.18}}};
  const double sizes[7] = {1 * kMiB, 4 * kMiB, 16 * kMiB, 64 * kMiB, 256 * kMiB, kGiB, 8 * kGiB};
  for (const auto& c : curves) {
    for (int i = 0; i < 7; ++i) {
      NcclCall call;
      const double got = busbw(m, c.coll, sizes[i], "ring", &call);
      char what[64];
      std::snprintf(what, sizeof what, "H100 x8 %s ring %5.0f MiB (%s)", c.coll == NcclColl::kAllgather ? "AG" : "RS",
                    sizes[i] / kMiB, nccl_proto_name(call.proto));
      check(what, got, c.pub[i], sizes[i] == 4 * kMiB ? -1 : sizes[i] >= 256 * kMiB ? 0.10 : 0.20);
    }
    const NcclCall tiny = nccl_call(m, c.coll, 1024, nccl("ring"));
    check(c.coll == NcclColl::kAllgather ? "H100 x8 AG ring 1 KiB time us" : "H100 x8 RS ring 1 KiB time us",
          tiny.seconds * 1e6, 35, 0.30);
  }
}

// nccl-tests on 4 x 8 H100 with 8 x 400G InfiniBand each, NCCL 2.26.2, one process per GPU,
// NCCL's default algorithm (NVIDIA/nccl-tests#309, the VM cluster: about 365, 358, 225 and 125
// GB/s at 16 GiB, 1 GiB, 64 MiB and 16 MiB): NCCL chooses in both, so the model's choice is
// compared (a ring from 256 MiB, NVLS tree below). Within 10 % from 256 MiB, 20 % below.
TEST(NcclModel, FourNodeH100Default) {
  const NcclMachine m = machine(dgx("H100", 4, 400), 32);
  const double pub[][2] = {{16 * kGiB, 365.84}, {kGiB, 358.14}, {64 * kMiB, 224.53}, {16 * kMiB, 125.23}};
  for (const auto& [bytes, gbps] : pub) {
    NcclCall c;
    const double got = busbw(m, NcclColl::kAllreduce, bytes, "auto", &c);
    EXPECT_EQ(c.algo, bytes >= 256 * kMiB ? NcclAlgo::kRing : NcclAlgo::kNvlsTree);
    char what[64];
    std::snprintf(what, sizeof what, "4 x H100 x8 auto %6.0f MiB (%s/%s)", bytes / kMiB, nccl_algo_name(c.algo),
                  nccl_proto_name(c.proto));
    check(what, got, gbps, bytes >= 256 * kMiB ? 0.10 : 0.20);
  }
}

// NCCL's own choices: NVLS on one H100 node, NVLS tree on two, ring from four nodes for
// large messages; ring on one A100 node.
TEST(NcclModel, AutoPicksAsNcclDoes) {
  EXPECT_EQ(nccl_call(machine(dgx("H100", 1, 400), 8), NcclColl::kAllreduce, 1 << 30).algo, NcclAlgo::kNvls);
  EXPECT_EQ(nccl_call(machine(dgx("H100", 2, 400), 16), NcclColl::kAllreduce, 1 << 30).algo, NcclAlgo::kNvlsTree);
  EXPECT_EQ(nccl_call(machine(dgx("H100", 4, 400), 32), NcclColl::kAllreduce, 1 << 30).algo, NcclAlgo::kRing);
  EXPECT_EQ(nccl_call(machine(dgx("A100", 1, 200), 8), NcclColl::kAllreduce, 1 << 30).algo, NcclAlgo::kRing);
  // Small messages go LL; an algorithm that cannot run a collective is refused.
  EXPECT_EQ(nccl_call(machine(dgx("A100", 4, 200), 32), NcclColl::kAllreduce, 1024).proto, NcclProto::kLL);
  EXPECT_FALSE(nccl_call(machine(dgx("A100", 1, 200), 8), NcclColl::kAllreduce, 1 << 20, nccl("nvls")).ok);
  EXPECT_FALSE(nccl_call(machine(dgx("H100", 1, 400), 8), NcclColl::kBroadcast, 1 << 20, nccl("tree")).ok);
}

// Under one algorithm and protocol a bigger message never takes less time (across a switch
// of protocol it may: NCCL's own curve does at 1-2 MiB); more ranks never raise a ring's bus
// bandwidth.
TEST(NcclModel, TimeGrowsWithSizeAndRanks) {
  for (const char* gpu : {"A100", "H100"}) {
    for (int nodes : {1, 16}) {
      const NcclMachine m = machine(dgx(gpu, nodes, 400), nodes * 8);
      for (int c = 0; c < 5; ++c) {
        NcclCall last;
        for (double b = 8; b <= 16 * kGiB; b *= 2) {
          const NcclCall call = nccl_call(m, static_cast<NcclColl>(c), static_cast<size_t>(b));
          if (last.ok && call.algo == last.algo && call.proto == last.proto && call.channels == last.channels) {
            EXPECT_GE(call.seconds, last.seconds) << gpu << " " << nccl_coll_name(static_cast<NcclColl>(c)) << " " << b;
          }
          last = call;
        }
      }
    }
  }
  double last = 1e9;
  for (int nodes : {2, 4, 8, 16, 128}) {
    const double b = busbw(machine(dgx("H100", nodes, 400), nodes * 8), NcclColl::kAllreduce, kGiB, "ring");
    EXPECT_LE(b, last * 1.0001) << nodes;
    last = b;
  }
}

// NVLS on one node of 8 H100 SXM: nccl-tests, NCCL 2.26.2, NVLS enabled, out of place, one
// thread driving the eight GPUs (togethercomputer/together-nccl-tests, benchmarks/H100/results/
// 20260306_001221_slurm/all_reduce_nvls.out), busbw GB/s. Nothing in the NVLS clock was set from
// it: the rate is one NVLink x n/(n+1), the per-loop wait the tuner's Simple step through
// NVLink, the chunk sizes NCCL's. Within 10 % from 256 MiB and 20 % below (the criterion for
// held-out curves).
TEST(NcclModel, OneNodeH100NvlsCurve) {
  const NcclMachine m = one_thread(dgx("H100", 1, 400), 8);  // nThread 1 nGpus 8
  const double published[] = {44.07, 83.72, 131.23, 173.32, 233.27, 293.46, 358.47,
                              399.58, 422.63, 436.17, 466.96, 472.76, 476.45, 479.32};
  double bytes = 1 * kMiB;
  for (double p : published) {
    NcclCall c;
    const double bw = busbw(m, NcclColl::kAllreduce, bytes, "nvls", &c);
    EXPECT_EQ(c.algo, NcclAlgo::kNvls);
    char what[64];
    std::snprintf(what, sizeof what, "1 x DGX H100 NVLS %6.0f MiB", bytes / kMiB);
    check(what, bw, p, bytes >= 256 * kMiB ? 0.10 : 0.20);
    bytes *= 2;
  }
}

// NVLS with a network below it: nccl-tests on 2 x 8 H100 SXM, 8 x 400G InfiniBand, default
// algorithm (NVLS tree), busbw GB/s (NVIDIA/nccl-tests#309, two users' clusters: NCCL 2.26.2,
// and a second with its version not printed). The first curve's 8 GiB point gives the clock's
// share of the one-node NVLS rate (kNvlsNetworkShare); the pipeline fill (kNvlsTreeFillLoops,
// NCCL's chunk sizes) is two loops by the stages it crosses. 4 MiB and above are asserted
// within 10 % on both curves; 1 MiB, where the two clusters differ by 30 %, is printed.
TEST(NcclModel, NvlsAcrossNodesFromTwoNodeNvlsTree) {
  const NcclMachine m = machine(dgx("H100", 2, 400), 16);
  const struct { double bytes, first, second; } pts[] = {
      {1 * kMiB, 27.33, 21.08},    {4 * kMiB, 83.33, 70.91},     {16 * kMiB, 169.67, 156.07}, {64 * kMiB, 269.98, 263.66},
      {256 * kMiB, 392.35, 388.31}, {1 * kGiB, 448.90, 447.65}, {8 * kGiB, 468.46, 466.73}};
  for (const auto& p : pts) {
    NcclCall c;
    const double bw = busbw(m, NcclColl::kAllreduce, p.bytes, "auto", &c);
    EXPECT_EQ(c.algo, NcclAlgo::kNvlsTree) << p.bytes;
    char what[64];
    std::snprintf(what, sizeof what, "2 x DGX H100 NVLS tree %5.0f MiB, #309 a", p.bytes / kMiB);
    check(what, bw, p.first, p.bytes >= 4 * kMiB ? 0.10 : -1);
    std::snprintf(what, sizeof what, "2 x DGX H100 NVLS tree %5.0f MiB, #309 b", p.bytes / kMiB);
    check(what, bw, p.second, p.bytes >= 4 * kMiB ? 0.10 : -1);
  }
  // The share and the fill are the clock's only: NCCL's choice (the tuner) does not see them,
  // and one node's NVLS keeps its rate.
  const NcclMachine one = machine(dgx("H100", 1, 400), 8);
  EXPECT_NEAR(busbw(one, NcclColl::kAllreduce, 4 * kGiB, "nvls"), 480, 48);
  // The fill grows with NCCL's chunk: 32 KiB below 8 MiB, 64 KiB to 64 MiB, 128 KiB above on
  // two nodes, so the time above the bandwidth term steps up there.
  auto excess = [&](double bytes) {
    const NcclCall c = nccl_call(m, NcclColl::kAllreduce, static_cast<size_t>(bytes), nccl("nvls_tree"));
    const NcclCall big = nccl_call(m, NcclColl::kAllreduce, static_cast<size_t>(64 * kGiB), nccl("nvls_tree"));
    return c.seconds - bytes / (64 * kGiB) * big.seconds;
  };
  EXPECT_LT(excess(4 * kMiB), excess(16 * kMiB));
  EXPECT_LT(excess(16 * kMiB), excess(256 * kMiB));
}

// Eight nodes, default algorithm (#309, second user): printed, not asserted; NCCL's own
// choice there is not in the source, and the model's tuner takes NVLS tree at 16-256 MiB.
TEST(NcclModel, EightNodeDefaultPrinted) {
  const NcclMachine m = machine(dgx("H100", 8, 400), 64);
  const struct { double bytes, published; } pts[] = {{4 * kMiB, 40.52}, {16 * kMiB, 87.36}, {64 * kMiB, 184.00},
                                                     {256 * kMiB, 270.31}, {1 * kGiB, 286.81}};
  for (const auto& p : pts) {
    NcclCall c;
    const double bw = busbw(m, NcclColl::kAllreduce, p.bytes, "auto", &c);
    char what[64];
    std::snprintf(what, sizeof what, "8 x DGX H100 auto %5.0f MiB (%s)", p.bytes / kMiB, nccl_algo_name(c.algo));
    check(what, bw, p.published, -1);
  }
}

// NCCL_PROTO: runtime.nccl_proto forces the protocol as NCCL_PROTO does, inside the algorithms
// NCCL_ALGO leaves; the NVLS family and alltoall run Simple only.
TEST(NcclModel, ProtocolForcedAsNcclProtoDoes) {
  const NcclMachine m = machine(dgx("H100", 4, 400), 32);
  for (const char* proto : {"LL", "LL128", "Simple", "ll128", "simple"}) {
    NcclCall c;
    busbw(m, NcclColl::kAllreduce, 64 * kMiB, "ring", &c, proto);
    EXPECT_EQ(nccl("ring", proto).proto, c.proto) << proto << " got " << nccl_proto_name(c.proto);
    EXPECT_EQ(c.algo, NcclAlgo::kRing);
  }
  // 64 MiB on four nodes: the tuner takes LL128 for the ring; LL is slower there and Simple too.
  NcclCall any, ll, simple;
  busbw(m, NcclColl::kAllreduce, 64 * kMiB, "ring", &any);
  busbw(m, NcclColl::kAllreduce, 64 * kMiB, "ring", &ll, "LL");
  busbw(m, NcclColl::kAllreduce, 64 * kMiB, "ring", &simple, "Simple");
  EXPECT_EQ(any.proto, NcclProto::kLL128);
  EXPECT_GT(ll.tuner_us, any.tuner_us);
  EXPECT_GT(simple.tuner_us, any.tuner_us);
  EXPECT_FALSE(nccl_call(m, NcclColl::kAllreduce, 1 << 20, nccl("nvls_tree", "LL128")).ok);
  EXPECT_TRUE(nccl_call(m, NcclColl::kAllreduce, 1 << 20, nccl("nvls_tree", "Simple")).ok);
  EXPECT_FALSE(nccl_call(m, NcclColl::kAlltoall, 1 << 20, nccl("auto", "LL")).ok);
  EXPECT_TRUE(nccl_call(m, NcclColl::kAlltoall, 1 << 20, nccl("auto", "Simple")).ok);
  NcclProto unknown;
  EXPECT_FALSE(parse_nccl_proto("LL256", &unknown));
}

// An independent published curve the model cannot yet reproduce, printed for the record:
// 128 x 8 H100, NCCL_ALGO=Ring NCCL_PROTO=LL128 NCCL_MIN_NCHANNELS=32 (NVIDIA/nccl-tests#322;
// the model runs the graph's 8 channels and has no NCCL_MIN_NCHANNELS). docs/nccl_model.md.
TEST(NcclModel, ThousandRankLL128RingPrinted) {
  // The measurement ran 32 channels (NCCL_MIN_NCHANNELS=32); NCCL's own count there is 16.
  NcclMachine m = machine(dgx("H100", 128, 400), 1024);
  m.min_channels = 32;
  NcclMachine dflt = m;
  dflt.min_channels = 0;
  const struct { double bytes, published; } pts[] = {
      {1 * kGiB, 110.84}, {2 * kGiB, 212.23}, {4 * kGiB, 338.16}, {8 * kGiB, 364.57}, {16 * kGiB, 367.29}};
  double last = 0;
  for (const auto& p : pts) {
    NcclCall c, d;
    const double bw = busbw(m, NcclColl::kAllreduce, p.bytes, "ring", &c, "LL128");
    const double bw_default = busbw(dflt, NcclColl::kAllreduce, p.bytes, "ring", &d, "LL128");
    EXPECT_EQ(c.proto, NcclProto::kLL128);
    EXPECT_EQ(c.channels, 32);
    EXPECT_EQ(d.channels, 16);
    EXPECT_GT(bw, last);
    // LL128's per-channel cap binds on NCCL's 16 channels and not on 32.
    EXPECT_GT(bw, 1.05 * bw_default) << p.bytes;
    last = bw;
    char what[64];
    std::snprintf(what, sizeof what, "128 x DGX H100 ring/LL128 32 ch %3.0f GiB", p.bytes / kGiB);
    check(what, bw, p.published, -1);
  }
}

// NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS (ncclTopoPostset): the communicator's channels are
// twice the graph's, cut to the maximum, then copied up to the minimum. NCCL's tuner reads the
// search graph, so its choice does not move; the clock runs on the channels there are.
TEST(NcclModel, ChannelsAsNcclMinMaxNchannels) {
  const NcclMachine one = machine(dgx("H100", 1, 400), 8);
  EXPECT_EQ(nccl_comm_channels(one), 24);  // 12 graph channels at 30 GB/s, doubled
  EXPECT_EQ(nccl_comm_channels(machine(dgx("H100", 4, 400), 32)), 16);  // one per NIC, doubled
  NcclMachine m = one;
  m.max_channels = 1;
  EXPECT_EQ(nccl_comm_channels(m), 1);
  m.max_channels = 4;
  m.min_channels = 8;  // max first, then min: copies of the first four
  EXPECT_EQ(nccl_comm_channels(m), 8);
  m.max_channels = 64;
  m.min_channels = 200;
  EXPECT_EQ(nccl_comm_channels(m), 64);
  for (double bytes : {1 * kKiB, 1 * kMiB, 64 * kMiB, 1 * kGiB}) {
    NcclMachine narrow = one;
    narrow.max_channels = 1;
    const NcclCall a = nccl_call(one, NcclColl::kAllreduce, static_cast<size_t>(bytes), nccl("ring"));
    const NcclCall b = nccl_call(narrow, NcclColl::kAllreduce, static_cast<size_t>(bytes), nccl("ring"));
    EXPECT_EQ(a.proto, b.proto) << bytes;
    EXPECT_DOUBLE_EQ(a.tuner_us, b.tuner_us) << bytes;
    EXPECT_EQ(b.channels, 1);
    EXPECT_GE(b.seconds, a.seconds) << bytes;
  }
  // One channel of 24 carries 1/24 of the ring's bandwidth: a 1 GiB Simple call ~24 x longer.
  NcclMachine narrow = one;
  narrow.max_channels = 1;
  const double t24 = nccl_call(one, NcclColl::kAllreduce, 1u << 30, nccl("ring", "Simple")).seconds;
  const double t1 = nccl_call(narrow, NcclColl::kAllreduce, 1u << 30, nccl("ring", "Simple")).seconds;
  EXPECT_NEAR(t1 / t24, 24, 1.5);
  // More channels than the links need change nothing for Simple: the NVLinks are the limit.
  NcclMachine wide = one;
  wide.min_channels = 64;
  EXPECT_DOUBLE_EQ(nccl_call(wide, NcclColl::kAllreduce, 1u << 30, nccl("ring", "Simple")).seconds, t24);
}

// One name table per enum, in the enum's order: each name parses back to its value
// (algorithms and protocols in any case, as NCCL reads NCCL_ALGO and NCCL_PROTO; collectives
// as nccl-tests spells them), and a name of none is refused.
TEST(NcclModel, NamesParseBackToTheirValues) {
  EXPECT_EQ(nccl_algo_names(), (std::vector<std::string>{"ring", "tree", "nvls", "nvls_tree", "collnet", "pat"}));
  EXPECT_EQ(nccl_proto_names(), (std::vector<std::string>{"LL", "LL128", "Simple"}));
  EXPECT_EQ(nccl_coll_names(),
            (std::vector<std::string>{"allreduce", "allgather", "reducescatter", "broadcast", "alltoall"}));
  for (int i = 0; i < kNcclAlgos; ++i) {
    NcclAlgo a;
    ASSERT_TRUE(parse_nccl_algo(nccl_algo_names()[static_cast<size_t>(i)], &a));
    EXPECT_EQ(static_cast<int>(a), i);
    EXPECT_STREQ(nccl_algo_name(a), nccl_algo_names()[static_cast<size_t>(i)].c_str());
  }
  for (int i = 0; i < kNcclProtos; ++i) {
    NcclProto p;
    ASSERT_TRUE(parse_nccl_proto(nccl_proto_names()[static_cast<size_t>(i)], &p));
    EXPECT_EQ(static_cast<int>(p), i);
  }
  for (int i = 0; i < kNcclColls; ++i) {
    NcclColl c;
    ASSERT_TRUE(parse_nccl_coll(nccl_coll_names()[static_cast<size_t>(i)], &c));
    EXPECT_EQ(static_cast<int>(c), i);
  }
  NcclAlgo a;
  NcclProto p;
  NcclColl c;
  EXPECT_TRUE(parse_nccl_algo("NVLS_Tree", &a));
  EXPECT_EQ(a, NcclAlgo::kNvlsTree);
  EXPECT_TRUE(parse_nccl_proto("ll128", &p));
  EXPECT_EQ(p, NcclProto::kLL128);
  EXPECT_FALSE(parse_nccl_algo("auto", &a));  // "auto" is no algorithm: the settings leave it unset
  EXPECT_FALSE(parse_nccl_proto("LL256", &p));
  EXPECT_FALSE(parse_nccl_coll("AllReduce", &c));
  EXPECT_STREQ(NcclSettings{}.algo_name(), "auto");
  EXPECT_STREQ(NcclSettings{}.proto_name(), "auto");
}

}  // namespace
}  // namespace hvd::sim
