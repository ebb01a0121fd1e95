// Adasum allreduce over the in-process backend against a serial reference written here
// from the paper's pairwise rule and Horovod's tree (adjacent ranks first, then distance
// doubling), per tensor: world sizes 2, 4, 8, odd element counts, several tensors in one
// fused buffer, the special cases (orthogonal, identical, zero vectors), scale factors,
// and what is refused (non-power-of-two groups, integer and bfloat16 tensors).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "collectives/adasum.h"
#include "hvd/local.h"
#include "test_util.h"

namespace hvd {
namespace {

using Vec = std::vector<double>;

// Adasum's pairwise rule; a squared norm below sqrt(DBL_MIN) keeps its coefficient at 1.
Vec pairwise(const Vec& a, const Vec& b) {
  double dot = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  const double tiny = 1.4916681462400413e-154;
  const double ca = aa >= tiny ? 1 - dot / (2 * aa) : 1;
  const double cb = bb >= tiny ? 1 - dot / (2 * bb) : 1;
  Vec out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = ca * a[i] + cb * b[i];
  return out;
}

// x[r] is rank r's tensor: pairs (0,1), (2,3), ... first, then pairs of pairs, ...
Vec reference(std::vector<Vec> x) {
  for (size_t level = 1; level < x.size(); level *= 2)
    for (size_t i = 0; i + level < x.size(); i += 2 * level) x[i] = pairwise(x[i], x[i + level]);
  return x[0];
}

// Rank r's element i of tensor t: neither orthogonal nor parallel across ranks.
double value(int r, int t, int64_t i) {
  return std::sin(1.0 + 0.37 * static_cast<double>(i) + 1.3 * r + 2.1 * t) + 0.25 * ((r + t) % 3);
}

// A tensor's data in dtype dt, and what it reads back as (the reference sees the rounding).
struct Data {
  std::vector<uint8_t> bytes;
  Vec stored;
};

Data make(DataType dt, int64_t n, const std::function<double(int64_t)>& f) {
  Data d;
  d.bytes.resize(static_cast<size_t>(n) * dtype_size(dt));
  for (int64_t i = 0; i < n; ++i) test::store(d.bytes, i, dt, f(i));
  for (int64_t i = 0; i < n; ++i) d.stored.push_back(test::load(d.bytes.data(), i, dt));
  return d;
}

Vec read(const std::vector<uint8_t>& b, DataType dt) {
  Vec v(b.size() / dtype_size(dt));
  for (size_t i = 0; i < v.size(); ++i) v[i] = test::load(b.data(), static_cast<int64_t>(i), dt);
  return v;
}

// "a b c" from the parts (streams: gcc 12 warns falsely about chains of string +).
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream os;
  ((os << parts << ' '), ...);
  return os.str();
}

double rel_tol(DataType dt) {
  return dt == DataType::kFloat64 ? 1e-12 : dt == DataType::kFloat32 ? 2e-6 : 4e-3;
}

void expect_close(const Vec& got, const Vec& want, DataType dt, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 1e-30;
  for (double w : want) scale = std::max(scale, std::abs(w));
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], rel_tol(dt) * scale) << what << " element " << i;
}

const std::vector<int64_t> kCounts = {1, 7, 1001, 3, 0, 64};

class AdasumWorld : public ::testing::TestWithParam<int> {};

// The runtime: every tensor of a grouped (fused) allreduce and of separate ones matches the
// per-tensor reference, float16/32/64.
TEST_P(AdasumWorld, FusedAndSeparateTensorsMatchReference) {
  const int np = GetParam();
  for (DataType dt : {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16}) {
    Status s = run_local(np, test::fast_config(), [&](Runtime& rt) {
      const size_t nt = kCounts.size();
      std::vector<Data> in;
      std::vector<std::vector<uint8_t>> grouped(nt), single(nt);
      std::vector<std::string> names;
      std::vector<Tensor> ins, outs;
      for (size_t t = 0; t < nt; ++t) {
        in.push_back(make(dt, kCounts[t], [&](int64_t i) { return value(rt.rank(), static_cast<int>(t), i); }));
        grouped[t].assign(in[t].bytes.size(), 0xAB);
        single[t].assign(in[t].bytes.size(), 0xAB);
        names.push_back(cat("g", t));
        ins.push_back(Tensor{in[t].bytes.data(), dt, {kCounts[t]}});
        outs.push_back(Tensor{grouped[t].data(), dt, {kCounts[t]}});
      }
      Status st = rt.grouped_allreduce(names, ins, outs, ReduceOp::kAdasum);
      ASSERT_TRUE(st.ok()) << st.to_string();
      std::vector<Handle> hs;
      for (size_t t = 0; t < nt; ++t)
        hs.push_back(rt.allreduce_async(cat("s", t), ins[t],
                                        Tensor{single[t].data(), dt, {kCounts[t]}}, ReduceOp::kAdasum));
      for (auto& h : hs) ASSERT_TRUE(h->wait().ok());
      for (size_t t = 0; t < nt; ++t) {
        std::vector<Vec> all;
        for (int r = 0; r < np; ++r)
          all.push_back(make(dt, kCounts[t], [&](int64_t i) { return value(r, static_cast<int>(t), i); }).stored);
        const Vec want = reference(all);
        expect_close(read(grouped[t], dt), want, dt, cat("grouped", dtype_name(dt), "tensor", t, "rank", rt.rank()));
        expect_close(read(single[t], dt), want, dt, cat("separate", dtype_name(dt), "tensor", t, "rank", rt.rank()));
      }
    });
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
}

// The algorithm itself over one buffer holding several tensors: the dot products and norms
// are per tensor (one norm over the whole buffer would give other values).
TEST_P(AdasumWorld, CollectiveKeepsTensorBoundsInOneBuffer) {
  const int np = GetParam();
  std::vector<Vec> results(static_cast<size_t>(np));
  test::on_local_ranks(np, [&](OwnedSeams& seams) {
    const int r = seams.transport->rank();
    Vec buf;
    for (size_t t = 0; t < kCounts.size(); ++t)
      for (int64_t i = 0; i < kCounts[t]; ++i) buf.push_back(value(r, static_cast<int>(t), i) * (t + 1));
    DeviceBuffer scratch(seams.cpu.get(), 0);
    CollectiveContext c{*seams.transport, *seams.cpu, scratch, 1 << 10};
    Status st = adasum_allreduce(c, buf.data(), kCounts, DataType::kFloat64);
    ASSERT_TRUE(st.ok()) << st.to_string();
    results[static_cast<size_t>(r)] = buf;
  });
  size_t off = 0;
  for (size_t t = 0; t < kCounts.size(); ++t) {
    std::vector<Vec> all;
    for (int r = 0; r < np; ++r) {
      Vec v;
      for (int64_t i = 0; i < kCounts[t]; ++i) v.push_back(value(r, static_cast<int>(t), i) * (t + 1));
      all.push_back(v);
    }
    const Vec want = reference(all);
    for (int r = 0; r < np; ++r) {
      const Vec& got = results[static_cast<size_t>(r)];
      expect_close(Vec(got.begin() + static_cast<long>(off), got.begin() + static_cast<long>(off + want.size())),
                   want, DataType::kFloat64, cat("tensor", t, "rank", r));
    }
    off += want.size();
  }
}

// Orthogonal vectors add up (exactly: every dot product is 0); identical ones give the
// vector itself (both coefficients are exactly 1/2).
TEST_P(AdasumWorld, OrthogonalGiveTheSumIdenticalGiveTheVector) {
  const int np = GetParam();
  for (DataType dt : {DataType::kFloat32, DataType::kFloat64}) {
    Status s = run_local(np, test::fast_config(), [&](Runtime& rt) {
      const int r = rt.rank();
      const int64_t n = 3 * np + 1;
      Data ortho = make(dt, n, [&](int64_t i) { return i % np == r ? 1.5 + static_cast<double>(i) : 0.0; });
      Data same = make(dt, n, [&](int64_t i) { return std::cos(0.3 * static_cast<double>(i)) - 0.2; });
      std::vector<uint8_t> o1(ortho.bytes.size()), o2(same.bytes.size());
      ASSERT_TRUE(rt.allreduce("ortho", Tensor{ortho.bytes.data(), dt, {n}}, Tensor{o1.data(), dt, {n}},
                               ReduceOp::kAdasum).ok());
      ASSERT_TRUE(rt.allreduce("same", Tensor{same.bytes.data(), dt, {n}}, Tensor{o2.data(), dt, {n}},
                               ReduceOp::kAdasum).ok());
      const Vec got1 = read(o1, dt), got2 = read(o2, dt);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(got1[static_cast<size_t>(i)], 1.5 + static_cast<double>(i)) << "orthogonal element " << i;
        ASSERT_EQ(got2[static_cast<size_t>(i)], same.stored[static_cast<size_t>(i)]) << "identical element " << i;
      }
    });
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
}

// Zero vectors add nothing: all zeros stay zero; with only the last rank nonzero the
// result is its vector; prescale and postscale apply before and after the reduction.
TEST_P(AdasumWorld, ZeroVectorsAndScaleFactors) {
  const int np = GetParam();
  Status s = run_local(np, test::fast_config(), [&](Runtime& rt) {
    const int r = rt.rank();
    const int64_t n = 9;
    std::vector<float> zeros(n, 0.0f), out(n, 7.0f);
    ASSERT_TRUE(rt.allreduce("zeros", Tensor{zeros.data(), DataType::kFloat32, {n}},
                             Tensor{out.data(), DataType::kFloat32, {n}}, ReduceOp::kAdasum).ok());
    for (float x : out) ASSERT_EQ(x, 0.0f);
    std::vector<float> last(n, 0.0f);
    if (r == np - 1)
      for (int64_t i = 0; i < n; ++i) last[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i) - 1.0f;
    ASSERT_TRUE(rt.allreduce("last", Tensor{last.data(), DataType::kFloat32, {n}},
                             Tensor{out.data(), DataType::kFloat32, {n}}, ReduceOp::kAdasum).ok());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[static_cast<size_t>(i)], 0.5f * static_cast<float>(i) - 1.0f);
    // Orthogonal one-hot vectors, prescaled by 3 and postscaled by 0.5: 1.5 × the sum.
    std::vector<float> hot(static_cast<size_t>(np), 0.0f);
    hot[static_cast<size_t>(r)] = static_cast<float>(r + 1);
    std::vector<float> res(static_cast<size_t>(np));
    ASSERT_TRUE(rt.allreduce("scaled", Tensor{hot.data(), DataType::kFloat32, {np}},
                             Tensor{res.data(), DataType::kFloat32, {np}}, ReduceOp::kAdasum, 3.0, 0.5).ok());
    for (int q = 0; q < np; ++q) ASSERT_EQ(res[static_cast<size_t>(q)], 1.5f * static_cast<float>(q + 1));
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

INSTANTIATE_TEST_SUITE_P(PowersOfTwo, AdasumWorld, ::testing::Values(2, 4, 8),
                         [](const auto& info) { return "np" + std::to_string(info.param); });

// As Horovod: Adasum needs a power-of-two number of ranks. Every rank is told why.
TEST(Adasum, NonPowerOfTwoGroupsAreRefusedOnEveryRank) {
  for (int np : {3, 5, 6}) {
    Status s = run_local(np, test::fast_config(), [&](Runtime& rt) {
      std::vector<float> v(5, 1.0f);
      Tensor t{v.data(), DataType::kFloat32, {5}};
      Status st = rt.allreduce("x", t, t, ReduceOp::kAdasum);
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
      EXPECT_NE(st.message().find("power-of-two number of ranks"), std::string::npos) << st.message();
      // The runtime goes on: a sum right after works.
      ASSERT_TRUE(rt.allreduce("y", t, t, ReduceOp::kSum).ok());
      EXPECT_EQ(v[0], static_cast<float>(np));
    });
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
}

// A process set of two ranks in a world of three reduces; one of three does not.
TEST(Adasum, ProcessSetSizeCounts) {
  Status s = run_local(3, test::fast_config(), [&](Runtime& rt) {
    int pair = -1, trio = -1;
    ASSERT_TRUE(rt.add_process_set({0, 2}, &pair).ok());
    ASSERT_TRUE(rt.add_process_set({0, 1, 2}, &trio).ok());
    std::vector<double> v = {rt.rank() == 0 ? 1.0 : 0.0, rt.rank() == 2 ? 2.0 : 0.0};
    Tensor t{v.data(), DataType::kFloat64, {2}};
    if (rt.rank() != 1) {
      Status st = rt.allreduce("pair", t, t, ReduceOp::kAdasum, 1.0, 1.0, pair);
      ASSERT_TRUE(st.ok()) << st.to_string();
      EXPECT_EQ(v, (std::vector<double>{1.0, 2.0}));
    }
    Status st = rt.allreduce("trio", t, t, ReduceOp::kAdasum, 1.0, 1.0, trio);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

TEST(Adasum, OneRankIsTheIdentity) {
  Status s = run_local(1, test::fast_config(), [&](Runtime& rt) {
    std::vector<float> in = {1.0f, -2.0f, 3.5f}, out(3);
    ASSERT_TRUE(rt.allreduce("x", Tensor{in.data(), DataType::kFloat32, {3}},
                             Tensor{out.data(), DataType::kFloat32, {3}}, ReduceOp::kAdasum).ok());
    EXPECT_EQ(out, in);
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

TEST(Adasum, OnlyFloatAllreduces) {
  Status s = run_local(2, test::fast_config(), [&](Runtime& rt) {
    std::vector<uint8_t> b(64);
    for (DataType dt : {DataType::kInt32, DataType::kInt64, DataType::kUInt8, DataType::kBFloat16}) {
      Tensor t{b.data(), dt, {4}};
      Status st = rt.allreduce("x", t, t, ReduceOp::kAdasum);
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << dtype_name(dt);
      EXPECT_NE(st.message().find("float16, float32 and float64"), std::string::npos) << st.message();
    }
    Tensor f{b.data(), DataType::kFloat32, {4}};
    Status st = rt.reducescatter_async("rs", f, ReduceOp::kAdasum)->wait();
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

}  // namespace
}  // namespace hvd
