// With real data (--with-data), every collective run through the runtime on the simulated
// seams produces exactly the bytes the in-process backend (hvd::run_local) produces.
// Values are small integers (also as floats), so sums are exact whatever the fusion and
// hence the reduction order; averages divide the same exact sums.
#include <gtest/gtest.h>

#include <cstring>
#include <mutex>

#include "hvd/local.h"
#include "hvd/sim/isolate.h"
#include "hvd/sim/world.h"

namespace hvd::sim {
namespace {

template <typename T>
std::vector<T> values(int rank, int n, int salt) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<T>((rank * 7 + i * 3 + salt) % 23 - 11);
  return v;
}

template <typename T>
Tensor tensor(std::vector<T>& v, DataType dt, std::vector<int64_t> shape) {
  Tensor t;
  t.data = v.data();
  t.dtype = dt;
  t.shape = std::move(shape);
  return t;
}

void append(std::string* out, const std::string& name, const void* p, size_t n) {
  *out += name + ":" + std::to_string(n) + ":";
  out->append(static_cast<const char*>(p), n);
}

// Every collective, several dtypes and ops; returns this rank's results as bytes.
std::string exercise(Runtime& rt) {
  const int r = rt.rank(), p = rt.size();
  std::string out;
  // Many allreduces in flight at once (fused), float and int, sum/average/min/max.
  std::vector<std::vector<float>> f;
  std::vector<std::vector<int32_t>> i32;
  std::vector<Handle> hs;
  const ReduceOp ops[] = {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMin, ReduceOp::kMax};
  for (int k = 0; k < 8; ++k) f.push_back(values<float>(r, 1000 + 37 * k, k));
  for (int k = 0; k < 4; ++k) i32.push_back(values<int32_t>(r, 333 + k, 5 + k));
  for (int k = 0; k < 8; ++k) {
    Tensor t = tensor(f[static_cast<size_t>(k)], DataType::kFloat32, {static_cast<int64_t>(f[static_cast<size_t>(k)].size())});
    hs.push_back(rt.allreduce_async(std::string("f").append(std::to_string(k)), t, t, ops[k % 4]));
  }
  for (int k = 0; k < 4; ++k) {
    Tensor t = tensor(i32[static_cast<size_t>(k)], DataType::kInt32, {static_cast<int64_t>(i32[static_cast<size_t>(k)].size())});
    hs.push_back(rt.allreduce_async("i" + std::to_string(k), t, t, k % 2 ? ReduceOp::kMax : ReduceOp::kSum));
  }
  for (auto& h : hs) out += h->wait().to_string();
  for (size_t k = 0; k < f.size(); ++k) append(&out, "f", f[k].data(), f[k].size() * 4);
  for (size_t k = 0; k < i32.size(); ++k) append(&out, "i", i32[k].data(), i32[k].size() * 4);
  // A large one (ring with pipelined segments) and a tiny one (recursive halving-doubling).
  std::vector<float> big = values<float>(r, 3 << 20, 1), tiny = values<float>(r, 3, 2);
  Tensor tb = tensor(big, DataType::kFloat32, {static_cast<int64_t>(big.size())});
  Tensor tt = tensor(tiny, DataType::kFloat32, {3});
  out += rt.allreduce("big", tb, tb, ReduceOp::kSum).to_string();
  out += rt.allreduce("tiny", tt, tt, ReduceOp::kSum).to_string();
  append(&out, "big", big.data(), big.size() * 4);
  append(&out, "tiny", tiny.data(), tiny.size() * 4);
  // Allgather with a different first dimension per rank.
  std::vector<float> ag = values<float>(r, (r + 1) * 5, 3);
  Handle h = rt.allgather_async("ag", tensor(ag, DataType::kFloat32, {r + 1, 5}));
  out += h->wait().to_string();
  append(&out, "ag", h->output(), h->output_bytes());
  // Broadcast from the last rank.
  std::vector<int64_t> bc = values<int64_t>(r, 77, 4);
  out += rt.broadcast("bc", tensor(bc, DataType::kInt64, {77}), p - 1).to_string();
  append(&out, "bc", bc.data(), bc.size() * 8);
  // Alltoall with uneven splits.
  std::vector<int64_t> splits;
  int64_t rows = 0;
  for (int q = 0; q < p; ++q) {
    splits.push_back((r + q) % 3 + 1);
    rows += splits.back();
  }
  std::vector<float> a2a = values<float>(r, static_cast<int>(rows) * 2, 6);
  h = rt.alltoall_async("a2a", tensor(a2a, DataType::kFloat32, {rows, 2}), splits);
  out += h->wait().to_string();
  append(&out, "a2a", h->output(), h->output_bytes());
  // Reducescatter.
  std::vector<float> rs = values<float>(r, p * 10 + 3, 7);
  h = rt.reducescatter_async("rs", tensor(rs, DataType::kFloat32, {p * 10 + 3}), ReduceOp::kSum);
  out += h->wait().to_string();
  append(&out, "rs", h->output(), h->output_bytes());
  out += rt.barrier().to_string();
  return out;
}

std::string run_sim(int np, int gpus_per_node, const Config& cfg) {
  std::string result;
  Status s = run_isolated(
      [&](std::string* out) {
        WorldOptions o;
        o.cluster.nodes = (np + gpus_per_node - 1) / gpus_per_node;
        o.cluster.gpus_per_node = gpus_per_node;
        o.np = np;
        o.with_data = true;
        o.config = cfg;
        std::vector<std::string> per(static_cast<size_t>(np));
        Status st = simulate(o, [&](Runtime& rt, RankSeams& k) { per[static_cast<size_t>(k.rank)] = exercise(rt); });
        for (const auto& x : per) *out += x + "|";
        return st;
      },
      &result);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return result;
}

std::string run_real(int np, int gpus_per_node, const Config& cfg) {
  std::vector<std::string> per(static_cast<size_t>(np));
  Status s = run_local(np, cfg, [&](Runtime& rt) { per[static_cast<size_t>(rt.rank())] = exercise(rt); }, gpus_per_node);
  EXPECT_TRUE(s.ok()) << s.to_string();
  std::string out;
  for (const auto& x : per) out += x + "|";
  return out;
}

class WithData : public ::testing::TestWithParam<std::tuple<int, int, bool, const char*>> {};

TEST_P(WithData, SimulatedCollectivesEqualTheInProcessBackend) {
  const auto [np, per_node, hierarchical, algorithm] = GetParam();
  Config cfg;
  cfg.hierarchical_allreduce = hierarchical;
  cfg.hierarchical_allgather = hierarchical;
  cfg.allreduce_algorithm = algorithm;
  cfg.pipeline_chunk = 64 << 10;  // several slices per chunk for the big tensor
  cfg.fusion_threshold = 1 << 16;  // several fused buffers
  const std::string sim = run_sim(np, per_node, cfg);
  const std::string real = run_real(np, per_node, cfg);
  EXPECT_EQ(sim.size(), real.size());
  EXPECT_TRUE(sim == real) << "first difference at byte "
                           << std::mismatch(sim.begin(), sim.end(), real.begin(), real.end()).first - sim.begin();
  EXPECT_EQ(sim.find("OK"), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Worlds, WithData,
    ::testing::Values(std::make_tuple(2, 1, false, "auto"), std::make_tuple(3, 1, false, "auto"),
                      std::make_tuple(4, 2, true, "auto"), std::make_tuple(7, 1, false, "auto"),
                      std::make_tuple(8, 4, false, "ring"), std::make_tuple(8, 4, true, "auto"),
                      std::make_tuple(5, 1, false, "pipelined_ring"),
                      std::make_tuple(8, 2, false, "pipelined_ring"),
                      std::make_tuple(4, 1, false, "direct"), std::make_tuple(5, 1, false, "direct")));

// The pipelined ring (a runtime algorithm added for NCCL-style rings) computes what the
// step-by-step ring computes, in the real world.
TEST(PipelinedRing, EqualsTheRingInProcess) {
  for (int np : {2, 3, 6}) {
    Config ring, piped;
    ring.allreduce_algorithm = "ring";
    piped.allreduce_algorithm = "pipelined_ring";
    for (Config* c : {&ring, &piped}) {
      c->pipeline_chunk = 4 << 10;
      c->fusion_threshold = 1 << 16;
    }
    EXPECT_TRUE(run_real(np, 1, ring) == run_real(np, 1, piped)) << "np=" << np;
  }
}

}  // namespace
}  // namespace hvd::sim
