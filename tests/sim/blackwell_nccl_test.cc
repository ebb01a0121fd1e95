// Blackwell pods as the NCCL model prices them (hvd/sim/nccl_model.h), against published
// nccl-tests figures: B200 nodes (togethercomputer/together-nccl-tests reports, NCCL 2.28-2.29)
// and a GB200 NVL72 rack (coreweave/nccl-tests README, NCCL 2.26.2). docs/nccl_model.md has the
// table and its sources. Each test prints its rows (model, published, error) and asserts them
// within the stated tolerance; a known gap that the docs explain is printed, not asserted.
// Nothing in the model is set from these points.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "hvd/sim/nccl_model.h"

namespace hvd::sim {
namespace {

constexpr double kMiB = 1024.0 * 1024, kGiB = kMiB * 1024;
// Within 10 % from 256 MiB (DESIGN's criterion for held-out large-message points).
constexpr double kTolerance = 0.10;

// DGX B200: 8 B200 on NVLink 5 through NVSwitch, one 400G NDR NIC per GPU (scenarios/dgx_b200.json).
ClusterSpec dgx_b200(int nodes, int gpus_per_node = 8, bool sharp = false) {
  ClusterSpec c;
  c.nodes = nodes;
  c.gpus_per_node = gpus_per_node;
  c.gpu = "B200";
  c.intra.type = "nvlink";
  c.network.bandwidth = 400e9 / 8;
  c.network.nic = "per_gpu";
  c.network.protocol = "infiniband";
  c.network.sharp = sharp;
  return c;
}

// GB200 NVL72: trays of 4, 18 trays one NVLink domain (scenarios/gb200_nvl72.json).
ClusterSpec gb200_nvl72(int trays) {
  ClusterSpec c = dgx_b200(trays, 4);
  c.gpu = "GB200";
  c.nvlink_domain_nodes = 18;
  return c;
}

NcclMachine machine(const ClusterSpec& c, int np) {
  auto m = nccl_machine(c, np);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : NcclMachine{};
}

NcclSettings algo(const char* name) {
  NcclSettings s;
  NcclAlgo a;
  if (std::string(name) != "auto") {
    EXPECT_TRUE(parse_nccl_algo(name, &a)) << name;
    s.algo = a;
  }
  return s;
}

double busbw(const NcclMachine& m, NcclColl coll, double bytes, const char* a, NcclCall* out = nullptr) {
  const NcclCall c = nccl_call(m, coll, static_cast<size_t>(bytes), algo(a));
  if (out) *out = c;
  EXPECT_TRUE(c.ok) << a;
  return c.ok ? bytes / c.seconds / 1e9 * nccl_bus_factor(coll, m.ranks()) : 0;
}

// Prints the row; asserts it within `tol` of the published range [lo, hi] (< 0: printed only).
void check(const std::string& what, double model, double lo, double hi, double tol) {
  const double err = model < lo ? model / lo - 1 : model > hi ? model / hi - 1 : 0;
  char pub[32];
  if (lo == hi) std::snprintf(pub, sizeof pub, "%.0f", lo);
  else std::snprintf(pub, sizeof pub, "%.0f-%.0f", lo, hi);
  std::printf("%-52s model %7.1f  published %9s  %+6.1f %%%s\n", what.c_str(), model, pub, 100 * err,
              tol < 0 ? "  (gap)" : "");
  if (tol >= 0) {
    EXPECT_LE(std::fabs(err), tol) << what;
  }
}

// One node of 8 B200, allreduce at 16 and 32 GiB: ring ~680-698, NVLS ~840-844 GB/s busbw.
TEST(BlackwellNccl, OneNodeB200Allreduce) {
  const NcclMachine m = machine(dgx_b200(1), 8);
  for (double bytes : {16 * kGiB, 32 * kGiB}) {
    const std::string size = std::to_string(static_cast<int>(bytes / kGiB)) + " GiB";
    check("1 x B200 x8 allreduce ring " + size, busbw(m, NcclColl::kAllreduce, bytes, "ring"), 680, 698, kTolerance);
    NcclCall c;
    check("1 x B200 x8 allreduce nvls " + size, busbw(m, NcclColl::kAllreduce, bytes, "nvls"), 840, 844, kTolerance);
    busbw(m, NcclColl::kAllreduce, bytes, "auto", &c);
    EXPECT_EQ(c.algo, NcclAlgo::kNvls) << "NCCL's default on one B200 node is NVLS";
  }
}

// Ring allgather by node count, 8 GiB: 676 on one node, 371-383 from 2 to 64 nodes.
TEST(BlackwellNccl, B200AllgatherRingByNodes) {
  check("1 x B200 x8 allgather ring 8 GiB", busbw(machine(dgx_b200(1), 8), NcclColl::kAllgather, 8 * kGiB, "ring"),
        676, 676, kTolerance);
  double last = 1e9;
  for (int nodes : {2, 4, 8, 16, 32, 64}) {
    const double bw = busbw(machine(dgx_b200(nodes), nodes * 8), NcclColl::kAllgather, 8 * kGiB, "ring");
    check(std::to_string(nodes) + " x B200 x8 allgather ring 8 GiB", bw, 371, 383, kTolerance);
    EXPECT_LE(bw, last * 1.0001) << nodes;  // more nodes never raise a ring's bus bandwidth
    last = bw;
  }
}

// Four B200 nodes at 8 GiB, tuned per algorithm: allreduce / allgather / reduce-scatter ring
// 384/376/384, NVLS 348/372/384, SHARP 554/382/384. The published cluster has InfiniBand SHARP:
// NVLS across nodes then runs over it (the SHARP column of allreduce, NCCL's default there);
// the NVLS column of allreduce is NVLS tree (NVLS without the network's reduction).
TEST(BlackwellNccl, FourNodeB200Tuned) {
  const NcclMachine plain = machine(dgx_b200(4), 32);
  const NcclMachine sharp = machine(dgx_b200(4, 8, true), 32);
  const double s = 8 * kGiB;
  check("4 x B200 allreduce ring", busbw(plain, NcclColl::kAllreduce, s, "ring"), 384, 384, kTolerance);
  check("4 x B200 allgather ring", busbw(plain, NcclColl::kAllgather, s, "ring"), 376, 376, kTolerance);
  check("4 x B200 reducescatter ring", busbw(plain, NcclColl::kReducescatter, s, "ring"), 384, 384, kTolerance);
  // NCCL's tuner halves NVLS tree's network rate beyond two nodes (bwInter / 2); the run did not
  // lose that much (docs/nccl_model.md).
  check("4 x B200 allreduce nvls_tree", busbw(plain, NcclColl::kAllreduce, s, "nvls_tree"), 348, 348, -1);
  check("4 x B200 + SHARP allgather nvls", busbw(sharp, NcclColl::kAllgather, s, "nvls"), 372, 372, kTolerance);
  check("4 x B200 + SHARP reducescatter nvls", busbw(sharp, NcclColl::kReducescatter, s, "nvls"), 384, 384, kTolerance);
  NcclCall c;
  check("4 x B200 + SHARP allreduce auto (nvls)", busbw(sharp, NcclColl::kAllreduce, s, "auto", &c), 554, 554, kTolerance);
  EXPECT_EQ(c.algo, NcclAlgo::kNvls);
  check("4 x B200 + SHARP allgather auto (ring)", busbw(sharp, NcclColl::kAllgather, s, "auto", &c), 382, 382, kTolerance);
  EXPECT_EQ(c.algo, NcclAlgo::kRing);
  check("4 x B200 + SHARP reducescatter auto (ring)", busbw(sharp, NcclColl::kReducescatter, s, "auto", &c), 384, 384,
        kTolerance);
  EXPECT_EQ(c.algo, NcclAlgo::kRing);
}

// One GB200 NVL72 rack, 72 GPUs, NCCL's default: 512 MiB 586, 1 GiB 681, 2 GiB 758, 4 GiB 839,
// 8 GiB 835 GB/s busbw. NCCL takes NVLS across the rack's NVLink domain, as the published
// bandwidths (above any ring's 720) say. Printed: the model's NVLS loop overshoots (docs).
TEST(BlackwellNccl, Nvl72OneRackDefault) {
  const NcclMachine m = machine(gb200_nvl72(18), 72);
  EXPECT_EQ(m.nodes, 1);  // one NVLink domain is one NCCL node
  EXPECT_EQ(m.ranks_per_node, 72);
  const double pts[][2] = {{512 * kMiB, 586}, {kGiB, 681}, {2 * kGiB, 758}, {4 * kGiB, 839}, {8 * kGiB, 835}};
  for (const auto& [bytes, pub] : pts) {
    NcclCall c;
    const double bw = busbw(m, NcclColl::kAllreduce, bytes, "auto", &c);
    EXPECT_EQ(c.algo, NcclAlgo::kNvls) << bytes;
    char what[64];
    std::snprintf(what, sizeof what, "GB200 NVL72 x72 allreduce auto %5.0f MiB", bytes / kMiB);
    check(what, bw, pub, pub, -1);
  }
  // Across racks the domain's NICs carry the ring: 15 channels (the search stops once they
  // carry the GPU's NVLink total) at the NIC's 48 GB/s.
  const NcclMachine two = machine(gb200_nvl72(36), 144);
  EXPECT_EQ(two.nodes, 2);
  EXPECT_EQ(nccl_ring_graph(two).channels, 15);
}

// PAT runs allgather and reduce-scatter at one GPU per node only, and wins where latency
// rules: NCCL's linear 2.8 us a rank against the ring's network hop per rank.
TEST(BlackwellNccl, PatAtOneGpuPerNode) {
  const NcclMachine m = machine(dgx_b200(64, 1), 64);
  for (NcclColl coll : {NcclColl::kAllgather, NcclColl::kReducescatter}) {
    EXPECT_EQ(nccl_call(m, coll, 1 << 20).algo, NcclAlgo::kPat) << nccl_coll_name(coll);
    EXPECT_EQ(nccl_call(m, coll, size_t{1} << 30).algo, NcclAlgo::kRing) << nccl_coll_name(coll);
    const NcclCall pat = nccl_call(m, coll, 1 << 20, algo("pat"));
    EXPECT_TRUE(pat.ok);
    EXPECT_EQ(pat.proto, NcclProto::kSimple);
  }
  // Not allreduce, not with several GPUs a node.
  EXPECT_FALSE(nccl_call(m, NcclColl::kAllreduce, 1 << 20, algo("pat")).ok);
  EXPECT_FALSE(nccl_call(machine(dgx_b200(4), 32), NcclColl::kAllgather, 1 << 20, algo("pat")).ok);
  // NVLS allgather needs every GPU of the node in one multicast group of at most 32.
  EXPECT_FALSE(nccl_call(machine(gb200_nvl72(18), 72), NcclColl::kAllgather, 1 << 30, algo("nvls")).ok);
  EXPECT_TRUE(nccl_call(machine(gb200_nvl72(8), 32), NcclColl::kAllgather, 1 << 30, algo("nvls")).ok);
}

}  // namespace
}  // namespace hvd::sim
