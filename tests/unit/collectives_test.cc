// Allgather, broadcast, alltoall, reducescatter, barrier, join and process sets over the
// in-process backend, for several world sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <atomic>
#include <cstring>
#include <numeric>

#include "hvd/local.h"
#include "test_util.h"

namespace hvd {
namespace {

class WorldSize : public ::testing::TestWithParam<int> {};

TEST_P(WorldSize, AllgatherWithDifferentFirstDimensions) {
  const int size = GetParam();
  for (const char* alg : {"ring", "hierarchical"}) {
    Config cfg = test::fast_config();
    cfg.allgather_algorithm = alg;
    Status s = run_local(size, cfg, [&](Runtime& rt) {
      const int r = rt.rank();
      const int64_t rows = r % 3;  // 0, 1, 2, 0, ... rows of 3 columns
      std::vector<int32_t> in(static_cast<size_t>(rows * 3));
      for (int64_t i = 0; i < rows * 3; ++i) in[static_cast<size_t>(i)] = 100 * r + static_cast<int32_t>(i);
      Handle h = rt.allgather_async("ag", Tensor{in.data(), DataType::kInt32, {rows, 3}});
      ASSERT_TRUE(h->wait().ok());
      std::vector<int32_t> want;
      for (int q = 0; q < size; ++q)
        for (int64_t i = 0; i < (q % 3) * 3; ++i) want.push_back(100 * q + static_cast<int32_t>(i));
      ASSERT_EQ(h->output_shape(), (std::vector<int64_t>{static_cast<int64_t>(want.size() / 3), 3}));
      ASSERT_EQ(h->output_bytes(), want.size() * 4);
      if (!want.empty()) {
        EXPECT_EQ(std::memcmp(h->output(), want.data(), want.size() * 4), 0);
      }
    }, std::string(alg) == "hierarchical" ? 2 : 0);
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
}

TEST_P(WorldSize, BroadcastFromEveryRootTreeAndPipeline) {
  const int size = GetParam();
  for (const char* alg : {"tree", "pipeline"}) {
    Config cfg = test::fast_config();
    cfg.broadcast_algorithm = alg;
    Status s = run_local(size, cfg, [&](Runtime& rt) {
      for (int root = 0; root < size; ++root) {
        std::vector<float> v(50000, static_cast<float>(rt.rank()));
        Status st = rt.broadcast("b" + std::to_string(root), Tensor{v.data(), DataType::kFloat32, {50000}}, root);
        ASSERT_TRUE(st.ok()) << st.to_string();
        for (float x : v) ASSERT_EQ(x, static_cast<float>(root));
      }
    });
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
}

TEST_P(WorldSize, AlltoallWithUnevenSplits) {
  const int size = GetParam();
  Status s = run_local(size, test::fast_config(), [&](Runtime& rt) {
    const int r = rt.rank();
    // Rank r sends (r + q) % 3 rows of 2 values to rank q.
    std::vector<int64_t> splits;
    std::vector<int64_t> data;
    for (int q = 0; q < size; ++q) {
      splits.push_back((r + q) % 3);
      for (int64_t k = 0; k < splits.back() * 2; ++k) data.push_back(1000 * r + 10 * q + k);
    }
    const int64_t rows = std::accumulate(splits.begin(), splits.end(), int64_t{0});
    Handle h = rt.alltoall_async("a2a", Tensor{data.data(), DataType::kInt64, {rows, 2}}, splits);
    Status st = h->wait();
    ASSERT_TRUE(st.ok()) << st.to_string();
    std::vector<int64_t> want, want_splits;
    for (int q = 0; q < size; ++q) {
      want_splits.push_back((q + r) % 3);
      for (int64_t k = 0; k < want_splits.back() * 2; ++k) want.push_back(1000 * q + 10 * r + k);
    }
    EXPECT_EQ(h->received_splits(), want_splits);
    ASSERT_EQ(h->output_bytes(), want.size() * 8);
    if (!want.empty()) {
      EXPECT_EQ(std::memcmp(h->output(), want.data(), want.size() * 8), 0);
    }
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

TEST_P(WorldSize, ReducescatterSplitsFirstDimensionLikeHorovod) {
  const int size = GetParam();
  const int64_t rows = 2 * size + 1;  // uneven: the first rank gets one extra row
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMax}) {
    Status s = run_local(size, test::fast_config(), [&](Runtime& rt) {
      std::vector<float> in(static_cast<size_t>(rows * 4));
      for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(rt.rank() + static_cast<int>(i));
      Handle h = rt.reducescatter_async("rs", Tensor{in.data(), DataType::kFloat32, {rows, 4}}, op);
      Status st = h->wait();
      ASSERT_TRUE(st.ok()) << st.to_string();
      const int64_t mine = rows / size + (rt.rank() < rows % size ? 1 : 0);
      int64_t first = 0;
      for (int q = 0; q < rt.rank(); ++q) first += rows / size + (q < rows % size ? 1 : 0);
      ASSERT_EQ(h->output_shape(), (std::vector<int64_t>{mine, 4}));
      const float* out = static_cast<const float*>(h->output());
      for (int64_t i = 0; i < mine * 4; ++i) {
        const double idx = static_cast<double>(first * 4 + i);
        double want = op == ReduceOp::kMax ? idx + size - 1 : size * idx + size * (size - 1) / 2.0;
        if (op == ReduceOp::kAverage) want /= size;
        ASSERT_NEAR(out[i], want, 1e-4 * std::abs(want));
      }
    });
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
}

TEST_P(WorldSize, JoinLetsRanksWithLessDataFinish) {
  const int size = GetParam();
  Status s = run_local(size, test::fast_config(), [&](Runtime& rt) {
    // Rank r runs r+1 steps; ranks that finish early join and contribute zeros.
    for (int step = 0; step <= rt.rank(); ++step) {
      std::vector<float> v(5, 1.0f);
      Tensor t{v.data(), DataType::kFloat32, {5}};
      Status st = rt.allreduce("step" + std::to_string(step), t, t, ReduceOp::kSum);
      ASSERT_TRUE(st.ok()) << st.to_string();
      EXPECT_FLOAT_EQ(v[0], static_cast<float>(size - step)) << "step " << step;
    }
    int last = -1;
    Status st = rt.join(&last);
    ASSERT_TRUE(st.ok()) << st.to_string();
    EXPECT_EQ(last, size - 1);
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

TEST_P(WorldSize, BarrierAndProcessSets) {
  const int size = GetParam();
  Status s = run_local(size, test::fast_config(), [&](Runtime& rt) {
    ASSERT_TRUE(rt.barrier().ok());
    std::vector<int> evens;
    for (int r = 0; r < size; r += 2) evens.push_back(r);
    int id = -1;
    Status st = rt.add_process_set(evens, &id);
    ASSERT_TRUE(st.ok()) << st.to_string();
    EXPECT_EQ(id, 1);
    std::vector<int32_t> v(3, rt.rank());
    Tensor t{v.data(), DataType::kInt32, {3}};
    st = rt.allreduce("ps", t, t, ReduceOp::kSum, 1.0, 1.0, id);
    if (rt.rank() % 2 == 0) {
      ASSERT_TRUE(st.ok()) << st.to_string();
      int32_t want = 0;
      for (int r : evens) want += r;
      EXPECT_EQ(v[0], want);
    } else {
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
      EXPECT_NE(st.message().find("not a member of process set 1"), std::string::npos) << st.message();
    }
    // The world still works after the subset ran on its own.
    std::vector<int32_t> w(1, 1);
    Tensor tw{w.data(), DataType::kInt32, {1}};
    ASSERT_TRUE(rt.allreduce("world_after", tw, tw, ReduceOp::kSum).ok());
    EXPECT_EQ(w[0], size);
    // A removed set (size 0) and one that never was refuse an even-split alltoall with
    // one error (the split check never divides by the removed set's size, 0).
    st = rt.remove_process_set(id);
    ASSERT_TRUE(st.ok()) << st.to_string();
    for (int gone : {id, 7}) {
      Status a2a = rt.alltoall_async("a2a_gone", t, {}, gone)->wait();
      EXPECT_EQ(a2a.code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(a2a.message(), "process set " + std::to_string(gone) + " does not exist");
    }
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

// As in Horovod, only an allreduce completes while a rank has joined: an allgather or a
// broadcast (also one the response cache holds) fails on the ranks that submitted it (they
// then join), and join returns the same last rank everywhere.
TEST_P(WorldSize, JoinedRankLetsOnlyAllreduceComplete) {
  const int size = GetParam();
  if (size < 2) {  // one rank: its join is the last, and returns at once naming it
    Status one = run_local(1, test::fast_config(), [&](Runtime& rt) {
      int last = -1;
      ASSERT_TRUE(rt.join(&last).ok());
      EXPECT_EQ(last, 0);
    });
    ASSERT_TRUE(one.ok()) << one.to_string();
    return;
  }
  Status s = run_local(size, test::fast_config(), [&](Runtime& rt) {
    int last = -1;
    std::vector<float> v(6, 1.0f);
    Tensor t{v.data(), DataType::kFloat32, {3, 2}};
    // A broadcast every rank runs first is in the response cache when it comes again: a
    // cached collective must not slip past the joined rank (it would hang).
    ASSERT_TRUE(rt.broadcast("joined.bcast", t, 1).ok());
    if (rt.rank() == 0) {
      ASSERT_TRUE(rt.join(&last).ok());
    } else {
      Status g = rt.allgather_async("joined.gather", t)->wait();
      EXPECT_EQ(g.code(), StatusCode::kMismatch) << g.to_string();
      EXPECT_NE(g.message().find("while ranks have joined"), std::string::npos) << g.message();
      Status b = rt.broadcast("joined.bcast", t, 1);
      EXPECT_NE(b.message().find("while ranks have joined"), std::string::npos) << b.to_string();
      ASSERT_TRUE(rt.allreduce("joined.sum", t, t, ReduceOp::kSum).ok());
      EXPECT_FLOAT_EQ(v[0], static_cast<float>(size - 1));  // the joined rank adds zeros
      ASSERT_TRUE(rt.join(&last).ok());
    }
    EXPECT_NE(last, 0);
    // Everyone is back: an allgather works again.
    std::vector<float> w(2, static_cast<float>(rt.rank()));
    Tensor tw{w.data(), DataType::kFloat32, {1, 2}};
    Handle h = rt.allgather_async("after.join", tw);
    ASSERT_TRUE(h->wait().ok());
    EXPECT_EQ(h->output_shape(), (std::vector<int64_t>{size, 2}));
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

// A group goes in whole or not at all: a member the runtime refuses (a scalar
// reducescatter, a name already pending) refuses every member, on every rank, and nothing
// is left waiting; the next group runs.
TEST_P(WorldSize, GroupWithARefusedMemberIsRefusedWhole) {
  const int size = GetParam();
  Status s = run_local(size, test::fast_config(), [&](Runtime& rt) {
    std::vector<float> a(3 * size, 1.0f), scalar(1, 2.0f);
    Tensor ta{a.data(), DataType::kFloat32, {3 * size}}, ts{scalar.data(), DataType::kFloat32, {}};
    std::vector<Handle> hs = rt.grouped_reducescatter_async({"g.a", "g.scalar"}, {ta, ts}, ReduceOp::kSum);
    ASSERT_EQ(hs.size(), 2u);
    for (auto& h : hs) {
      ASSERT_TRUE(h->poll()) << "a refused member is finished at once";
      Status st = h->wait();
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
      EXPECT_NE(st.message().find("at least one dimension"), std::string::npos) << st.message();
    }
    EXPECT_NE(hs[0]->wait().message().find("another tensor of the group ('g.scalar') was refused"), std::string::npos);
    std::vector<Handle> ok = rt.grouped_reducescatter_async({"g.b", "g.c"}, {ta, ta}, ReduceOp::kSum);
    for (auto& h : ok) ASSERT_TRUE(h->wait().ok());
    if (size < 2) return;  // alone, the pending op below would complete at once
    // A member whose name is already pending: the group is refused, the pending op is not.
    std::vector<float> b(4, 1.0f);
    Tensor tb{b.data(), DataType::kFloat32, {4}};
    Handle pending = rt.allreduce_async("g.pending." + std::to_string(rt.rank()), tb, tb, ReduceOp::kSum);
    std::vector<Handle> dup = rt.grouped_allreduce_async({"g.fresh", "g.pending." + std::to_string(rt.rank())},
                                                         {tb, tb}, {tb, tb}, ReduceOp::kSum);
    for (auto& h : dup) EXPECT_EQ(h->wait().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(dup[1]->wait().message().find("already pending"), std::string::npos) << dup[1]->wait().message();
    // Everyone submits everyone's pending name: they complete.
    std::vector<std::vector<float>> others(static_cast<size_t>(size), std::vector<float>(4, 1.0f));
    std::vector<Handle> rest;
    for (int q = 0; q < size; ++q) {
      if (q == rt.rank()) continue;
      Tensor tq{others[static_cast<size_t>(q)].data(), DataType::kFloat32, {4}};
      rest.push_back(rt.allreduce_async("g.pending." + std::to_string(q), tq, tq, ReduceOp::kSum));
    }
    ASSERT_TRUE(pending->wait().ok());
    for (auto& h : rest) ASSERT_TRUE(h->wait().ok());
    EXPECT_FLOAT_EQ(b[0], static_cast<float>(size));
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

// Min and Max propagate a NaN from any rank (torch.minimum / torch.maximum do), whichever
// operand of the kernel it lands in: ranks 0 and size-1 hold NaNs at different places.
TEST_P(WorldSize, MinMaxPropagateNaN) {
  const int size = GetParam();
  Status s = run_local(size, test::fast_config(), [&](Runtime& rt) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (DataType dt : {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16}) {
      for (ReduceOp op : {ReduceOp::kMin, ReduceOp::kMax}) {
        const int64_t n = 37;  // vector loops and their tails
        std::vector<uint8_t> buf(static_cast<size_t>(n) * dtype_size(dt));
        for (int64_t i = 0; i < n; ++i) {
          double v = static_cast<double>(i + rt.rank());
          if ((rt.rank() == 0 && i == 2) || (rt.rank() == size - 1 && (i == 5 || i == 33))) v = nan;
          test::store(buf, i, dt, v);
        }
        Tensor t{buf.data(), dt, {n}};
        const std::string name = "nan." + std::string(dtype_name(dt)) + (op == ReduceOp::kMin ? ".min" : ".max");
        ASSERT_TRUE(rt.allreduce(name, t, t, op).ok());
        for (int64_t i = 0; i < n; ++i) {
          const double got = test::load(buf.data(), i, dt);
          if (i == 2 || i == 5 || i == 33) {
            EXPECT_TRUE(std::isnan(got)) << name << " [" << i << "] = " << got;
          } else {
            EXPECT_EQ(got, static_cast<double>(op == ReduceOp::kMin ? i : i + size - 1)) << name << " [" << i << "]";
          }
        }
      }
    }
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

INSTANTIATE_TEST_SUITE_P(Worlds, WorldSize, ::testing::Values(1, 2, 3, 4, 7, 8),
                         [](const auto& info) { return "np" + std::to_string(info.param); });

TEST(Topology, LocalAndCrossRanksFromNodes) {
  std::atomic<int> checked{0};
  Status s = run_local(6, test::fast_config(), [&](Runtime& rt) {
    EXPECT_EQ(rt.size(), 6);
    EXPECT_EQ(rt.local_size(), 3);
    EXPECT_EQ(rt.local_rank(), rt.rank() % 3);
    EXPECT_EQ(rt.cross_size(), 2);
    EXPECT_EQ(rt.cross_rank(), rt.rank() / 3);
    ++checked;
  }, 3);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(checked, 6);
}

}  // namespace
}  // namespace hvd
