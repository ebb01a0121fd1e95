// The eager small allreduce: cached CPU allreduces of at most eager_allreduce_bytes per
// cycle ride on the response-cache bit exchange and are reduced there. Checked against a
// serial reference at 1 to 5 ranks (non-powers of two fold into a partner), with every
// dtype and element-wise op and scale factors; ranks ready for different tensors in a
// cycle; a rank that changes a cached tensor's shape; a joined rank; and the knob's bounds.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "test_util.h"

namespace hvd {
namespace {

Config eager_config(int64_t eager_bytes) {
  Config c = test::fast_config();
  c.cycle_time_ms = 0;  // event driven: a blocked caller runs its cycle at once
  c.eager_allreduce_bytes = eager_bytes;
  return c;
}

// `steps` rounds of one blocking allreduce per (dtype, op) on every rank, each checked
// against the serial reference (prescale 2, postscale 0.5: the scales cancel exactly in
// every dtype); returns the ranks' stats summed and counts wrong elements.
RuntimeStats all_kinds(int size, const Config& cfg, int steps, int64_t count, int* wrong) {
  RuntimeStats sum;
  std::mutex mu;
  std::atomic<int> bad{0};
  Status s = run_local(size, cfg, [&](Runtime& rt) {
    const int r = rt.rank();
    for (int step = 0; step < steps; ++step) {
      for (DataType dt : test::all_dtypes()) {
        for (ReduceOp op : test::all_ops()) {
          std::vector<uint8_t> in(static_cast<size_t>(count) * dtype_size(dt)), out(in.size());
          for (int64_t i = 0; i < count; ++i) test::store(in, i, dt, test::test_value(r, i, op, dt));
          OpRequest q;
          q.op = OpType::kAllreduce;
          q.name = "t." + std::string(dtype_name(dt)) + "." + std::to_string(static_cast<int>(op));
          q.input = Tensor{in.data(), dt, {count}};
          q.output = Tensor{out.data(), dt, {count}};
          q.reduce_op = op;
          const bool scaled = op == ReduceOp::kSum && dt != DataType::kUInt8 && dt != DataType::kInt8;
          if (scaled) {
            q.prescale = 2.0;
            q.postscale = 0.5;
          }
          q.caller_waits = true;
          Status st = rt.enqueue(std::move(q))->wait();
          if (!st.ok()) {
            ADD_FAILURE() << st.to_string();
            ++bad;
            continue;
          }
          for (int64_t i = 0; i < count; ++i) {
            const double want = test::reference(size, i, op, dt);
            if (std::abs(test::load(out.data(), i, dt) - want) > test::tolerance(dt, op, want)) ++bad;
          }
        }
      }
    }
    const RuntimeStats st = rt.stats();
    std::lock_guard<std::mutex> lk(mu);
    sum.tensors += st.tensors;
    sum.cache_hits += st.cache_hits;
    sum.eager_tensors += st.eager_tensors;
  });
  EXPECT_TRUE(s.ok()) << s.to_string();
  *wrong = bad.load();
  return sum;
}

class EagerWorld : public ::testing::TestWithParam<int> {};

TEST_P(EagerWorld, EveryDtypeOpAndScaleMatchesTheSerialReference) {
  const int size = GetParam();
  int wrong = -1;
  const RuntimeStats st = all_kinds(size, eager_config(4096), 3, 13, &wrong);
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(st.tensors, int64_t{size} * 3 * 8 * 5);
  // The first step is negotiated in full; the later ones are cache hits, and a cache hit
  // that every rank has in the same cycle is reduced on the bit exchange.
  EXPECT_GT(st.eager_tensors, 0);
  EXPECT_LE(st.eager_tensors, st.cache_hits);
}

INSTANTIATE_TEST_SUITE_P(Ranks, EagerWorld, ::testing::Values(1, 2, 3, 4, 5),
                         [](const ::testing::TestParamInfo<int>& i) { return "np" + std::to_string(i.param); });

TEST(Eager, OffOrAboveTheThresholdTheNegotiatedPathGivesTheSameResults) {
  int wrong = -1;
  RuntimeStats off = all_kinds(3, eager_config(0), 2, 13, &wrong);
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(off.eager_tensors, 0);
  EXPECT_GT(off.cache_hits, 0);
  // 200 elements are 200 to 1,600 bytes: above a 100-byte threshold every time.
  RuntimeStats above = all_kinds(3, eager_config(100), 2, 200, &wrong);
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(above.eager_tensors, 0);
}

// Each rank submits the same tensors in another order, some only after a pause: a cycle's
// bits differ between ranks, only what all of them hold is reduced, and the rest comes in a
// later cycle. Every result is right.
TEST(Eager, RanksReadyForDifferentTensorsInACycleStillAgree) {
  constexpr int kSize = 3, kTensors = 6, kSteps = 6;
  std::atomic<int> wrong{0};
  std::atomic<int64_t> eager{0};
  Config cfg = eager_config(4096);
  cfg.cycle_time_ms = 0.2;  // the loop runs the cycles: submissions of a rank split across them
  Status s = run_local(kSize, cfg, [&](Runtime& rt) {
    const int r = rt.rank();
    for (int step = 0; step < kSteps; ++step) {
      std::vector<std::vector<float>> v(kTensors);
      std::vector<Handle> hs(kTensors);
      for (int k = 0; k < kTensors; ++k) {
        const int t = (k + r * 2) % kTensors;  // rank r starts at tensor 2r
        v[t].assign(5, static_cast<float>(r + t + step));
        Tensor x{v[t].data(), DataType::kFloat32, {5}};
        hs[t] = rt.allreduce_async("grad." + std::to_string(t), x, x, ReduceOp::kSum);
        if ((k + r) % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
      }
      for (int t = 0; t < kTensors; ++t) {
        Status st = hs[t]->wait();
        const float want = static_cast<float>(kSize * (t + step) + kSize * (kSize - 1) / 2);
        if (!st.ok() || v[t][0] != want || v[t][4] != want) ++wrong;
      }
    }
    eager += rt.stats().eager_tensors;
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(wrong.load(), 0);
  RecordProperty("eager_tensors", static_cast<int>(eager.load()));
}

// A cached tensor whose shape changes on one rank: its bit is stale there, so no rank
// reduces it eagerly, and the full round reports the mismatch on every rank.
TEST(Eager, AChangedShapeOnOneRankIsAMismatchOnEveryRank) {
  std::vector<Status> last(3);
  Status s = run_local(3, eager_config(4096), [&](Runtime& rt) {
    std::vector<float> v(8, 1.0f);
    for (int step = 0; step < 3; ++step) {
      Tensor t{v.data(), DataType::kFloat32, {4}};
      ASSERT_TRUE(rt.allreduce("w", t, t, ReduceOp::kSum).ok());
    }
    const int64_t n = rt.rank() == 1 ? 8 : 4;
    Tensor t{v.data(), DataType::kFloat32, {n}};
    last[static_cast<size_t>(rt.rank())] = rt.allreduce("w", t, t, ReduceOp::kSum);
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
  for (const Status& st : last) {
    EXPECT_EQ(st.code(), StatusCode::kMismatch) << st.to_string();
    EXPECT_EQ(st.message(), last[0].message());
  }
}

// A rank that joined sends no data (it contributes the identity through the negotiated
// path): the others' allreduces stay right while it waits in join.
TEST(Eager, AJoinedRankMakesTheOthersTakeTheNegotiatedPath) {
  constexpr int kSize = 3;
  std::atomic<int> wrong{0};
  Status s = run_local(kSize, eager_config(4096), [&](Runtime& rt) {
    const int steps = rt.rank() == 2 ? 2 : 6;  // rank 2 runs out of data first
    for (int step = 0; step < steps; ++step) {
      std::vector<float> v(7, static_cast<float>(rt.rank() + 1));
      Tensor t{v.data(), DataType::kFloat32, {7}};
      if (!rt.allreduce("g", t, t, ReduceOp::kSum).ok()) ++wrong;
      const float want = step < 2 ? 6.0f : 3.0f;  // 1 + 2 + 3, then rank 2 adds nothing
      if (v[0] != want || v[6] != want) ++wrong;
    }
    int last = -1;
    if (!rt.join(&last).ok()) ++wrong;
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Eager, NegativeThresholdIsRefused) {
  Config c;
  c.eager_allreduce_bytes = -1;
  const Status s = c.validate();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("eager_allreduce_bytes"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace hvd
