// The real ring_allreduce over the SimGrid transport on an uncontended star (one GPU per
// server, NIC per GPU, CM02 without cross-traffic, no protocol overhead, free device)
// takes T = 2(p-1)·α + 2(p-1)/p · n/B, within 1 %, for p = 8 … 512, n = 1 KiB … 1 GiB.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "collectives/allreduce_ring.h"
#include "hvd/sim/isolate.h"
#include "hvd/sim/world.h"

namespace hvd::sim {
namespace {

constexpr double kAlpha = 5e-6;         // one-way latency between two GPUs
constexpr double kBandwidth = 25e9 / 8; // 25 Gbit/s

struct Case {
  int p;
  int64_t bytes;
};

// Simulated time of one ring allreduce of `bytes` (uint8, phantom) on p ranks.
Status ring_time(const Case& c, std::string* out) {
  WorldOptions o;
  o.cluster.nodes = c.p;
  o.cluster.gpus_per_node = 1;
  o.cluster.network.bandwidth = kBandwidth;
  o.cluster.network.latency = kAlpha;
  o.cluster.network.nic = "per_gpu";
  o.cluster.network.efficiency = 1.0;
  o.cluster.network.message_overhead = 0;
  o.gpu_cost = DeviceCostSpec{};  // free copies and reductions
  o.gpu_cost.copy_bandwidth = o.gpu_cost.reduce_bandwidth = 0;
  o.np = c.p;
  double end = 0;
  Status failed;
  Status s = simulate_ranks(o, [&](RankSeams& k) {
    DeviceBuffer buf(k.gpu, static_cast<size_t>(c.bytes));
    DeviceBuffer scratch(k.gpu, 0);
    CollectiveContext ctx{*k.transport, *k.gpu, scratch, 4 << 20};
    const double t0 = k.platform->now();
    Status st = ring_allreduce(ctx, buf.data(), c.bytes, DataType::kUInt8, ReduceOp::kSum);
    if (!st.ok()) failed = st;
    end = std::max(end, k.platform->now() - t0);
  });
  if (!s.ok()) return s;
  if (!failed.ok()) return failed;
  std::ostringstream os;
  os.precision(17);
  os << end;
  *out = os.str();
  return Status::OK();
}

TEST(AlphaBeta, RingAllreduceMatchesTheModelWithinOnePercent) {
  std::vector<Case> cases;
  for (int p : {8, 24, 64, 512})
    for (int64_t n : {int64_t{1} << 10, int64_t{1} << 20, int64_t{64} << 20, int64_t{1} << 30})
      cases.push_back({p, n});
  std::vector<IsolatedJob> jobs;
  for (const Case& c : cases) jobs.push_back([c](std::string* r) { return ring_time(c, r); });
  std::vector<std::string> results;
  std::vector<Status> st = run_isolated_many(jobs, 2, &results);
  std::printf("%6s %12s %14s %14s %9s\n", "p", "bytes", "simulated_s", "model_s", "error_%");
  for (size_t i = 0; i < cases.size(); ++i) {
    ASSERT_TRUE(st[i].ok()) << st[i].to_string();
    const double p = cases[i].p, n = static_cast<double>(cases[i].bytes);
    const double model = 2 * (p - 1) * kAlpha + 2 * (p - 1) / p * n / kBandwidth;
    const double sim = std::stod(results[i]);
    const double err = (sim - model) / model * 100;
    std::printf("%6d %12lld %14.9f %14.9f %+9.4f\n", cases[i].p, static_cast<long long>(cases[i].bytes),
                sim, model, err);
    EXPECT_LT(std::fabs(err), 1.0) << "p=" << p << " n=" << n;
  }
}

}  // namespace
}  // namespace hvd::sim
