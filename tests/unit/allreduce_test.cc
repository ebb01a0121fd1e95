// Allreduce over the in-process backend, parameterised over world size × element count ×
// algorithm, every dtype × op against a serial reference.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "collectives/collective.h"
#include "hvd/local.h"
#include "test_util.h"

namespace hvd {
namespace {

using test::all_dtypes;
using test::all_ops;

struct Case {
  int size;
  int64_t count;
  std::string algorithm;
};

class AllreduceTest : public ::testing::TestWithParam<std::tuple<int, int64_t, std::string>> {};

void check_output(int size, int rank, const std::vector<uint8_t>& out, int64_t count, DataType dt,
                  ReduceOp op) {
  for (int64_t i = 0; i < count; ++i) {
    const double want = test::reference(size, i, op, dt);
    const double got = test::load(out.data(), i, dt);
    ASSERT_NEAR(got, want, test::tolerance(dt, op, want))
        << "rank " << rank << " element " << i << " dtype " << dtype_name(dt) << " op "
        << op_name(op);
  }
}

TEST_P(AllreduceTest, EveryDtypeAndOpMatchesSerialReference) {
  const auto [size, count, algorithm] = GetParam();
  Config cfg = test::fast_config();
  cfg.allreduce_algorithm = algorithm;
  const int ranks_per_node = algorithm == "hierarchical" ? 2 : 0;
  Status s = run_local(size, cfg, [&, size = size, count = count](Runtime& rt) {
    struct Op {
      DataType dt;
      ReduceOp op;
      std::vector<uint8_t> in, out;
      Handle h;
    };
    std::vector<Op> ops;
    for (DataType dt : all_dtypes())
      for (ReduceOp op : all_ops()) ops.push_back({dt, op, {}, {}, nullptr});
    for (Op& o : ops) {
      const size_t bytes = static_cast<size_t>(count) * dtype_size(o.dt);
      o.in.resize(bytes);
      o.out.assign(bytes, 0xAB);
      for (int64_t i = 0; i < count; ++i)
        test::store(o.in, i, o.dt, test::test_value(rt.rank(), i, o.op, o.dt));
      Tensor in{o.in.data(), o.dt, {count}};
      Tensor out{o.out.data(), o.dt, {count}};
      std::string name = std::string("grad.") + std::string(dtype_name(o.dt)) + "." +
                         std::string(op_name(o.op));
      o.h = rt.allreduce_async(name, in, out, o.op);
    }
    for (Op& o : ops) {
      Status st = o.h->wait();
      ASSERT_TRUE(st.ok()) << st.to_string();
      check_output(size, rt.rank(), o.out, count, o.dt, o.op);
    }
  }, ranks_per_node);
  ASSERT_TRUE(s.ok()) << s.to_string();
}

INSTANTIATE_TEST_SUITE_P(
    Worlds, AllreduceTest,
    ::testing::Combine(::testing::Values(1, 2, 3, 4, 7, 8),
                       ::testing::Values(int64_t{0}, int64_t{1}, int64_t{1001}, int64_t{70001}),
                       ::testing::Values(std::string("ring"), std::string("rhd"), std::string("direct"),
                                         std::string("hierarchical"))),
    [](const auto& info) {
      return "np" + std::to_string(std::get<0>(info.param)) + "_n" +
             std::to_string(std::get<1>(info.param)) + "_" + std::get<2>(info.param);
    });

// The ring's offsets computed on demand are the table's, for counts below, at and above
// the number of parts.
TEST(Allreduce, EvenSplitOnDemandMatchesTheTable) {
  for (int parts : {1, 2, 3, 7, 64, 4096})
    for (int64_t count : {int64_t{0}, int64_t{1}, int64_t{5}, int64_t{4095}, int64_t{4096}, int64_t{4097},
                          int64_t{44654504}, int64_t{3} << 33}) {
      const std::vector<int64_t> table = even_split(count, parts);
      const EvenSplit lazy(count, parts);
      for (size_t k = 0; k < table.size(); ++k)
        ASSERT_EQ(lazy[k], table[k]) << "count " << count << ", parts " << parts << ", k " << k;
    }
}

TEST(Allreduce, InPlaceAndScaleFactors) {
  Status s = run_local(3, test::fast_config(), [](Runtime& rt) {
    std::vector<float> v(10, static_cast<float>(rt.rank() + 1));  // 1, 2, 3 → sum 6
    Tensor t{v.data(), DataType::kFloat32, {10}};
    Status st = rt.allreduce("inplace", t, t, ReduceOp::kSum, 0.5, 4.0);
    ASSERT_TRUE(st.ok()) << st.to_string();
    for (float x : v) EXPECT_FLOAT_EQ(x, 12.0f);  // (0.5·6)·4
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

TEST(Allreduce, MultiDimensionalShapesAndGroupedUnit) {
  Status s = run_local(4, test::fast_config(), [](Runtime& rt) {
    std::vector<double> a(6, rt.rank()), b(3, 1.0), oa(6), ob(3);
    Status st = rt.grouped_allreduce({"ga", "gb"},
                                     {Tensor{a.data(), DataType::kFloat64, {2, 3}},
                                      Tensor{b.data(), DataType::kFloat64, {3}}},
                                     {Tensor{oa.data(), DataType::kFloat64, {2, 3}},
                                      Tensor{ob.data(), DataType::kFloat64, {3}}},
                                     ReduceOp::kSum);
    ASSERT_TRUE(st.ok()) << st.to_string();
    for (double x : oa) EXPECT_DOUBLE_EQ(x, 6.0);
    for (double x : ob) EXPECT_DOUBLE_EQ(x, 4.0);
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

// A group of mixed element types (and an in-place member) reduces every member in its own
// type: a buffer holds one type, so the group runs as one allreduce per run of members that
// can share one; no member is read or written in another member's type (which would run
// past its buffer). Fusion on and off, in place and out of place.
TEST(Allreduce, GroupedMixedTypesReduceEachInItsOwnType) {
  for (int64_t threshold : {int64_t{0}, int64_t{64} << 20}) {
    Config cfg = test::fast_config();
    cfg.fusion_threshold = threshold;
    Status s = run_local(3, cfg, [](Runtime& rt) {
      const double r = rt.rank() + 1;  // 1, 2, 3: sums 6
      std::vector<float> a(3, static_cast<float>(r)), c(5, static_cast<float>(10 * r)), oa(3), oc(5);
      std::vector<double> b(2, 7 * r), ob(2);
      std::vector<int32_t> d(4, static_cast<int32_t>(r));
      const Tensor ta{a.data(), DataType::kFloat32, {3}}, tb{b.data(), DataType::kFloat64, {2}},
          tc{c.data(), DataType::kFloat32, {5}}, td{d.data(), DataType::kInt32, {4}};
      Status st = rt.grouped_allreduce({"mix.a", "mix.b", "mix.c", "mix.d"}, {ta, tb, tc, td},
                                       {Tensor{oa.data(), DataType::kFloat32, {3}}, Tensor{ob.data(), DataType::kFloat64, {2}},
                                        Tensor{oc.data(), DataType::kFloat32, {5}}, td},
                                       ReduceOp::kSum);
      ASSERT_TRUE(st.ok()) << st.to_string();
      for (float x : oa) EXPECT_FLOAT_EQ(x, 6.0f);
      for (double x : ob) EXPECT_DOUBLE_EQ(x, 42.0);
      for (float x : oc) EXPECT_FLOAT_EQ(x, 60.0f);
      for (int32_t x : d) EXPECT_EQ(x, 6);
    });
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
}

// Grouped calls whose lists differ in length fail on the spot with a message that says so
// (not a complaint about an empty tensor name); the runtime goes on serving.
TEST(Allreduce, GroupedListsOfDifferentLengthsAreNamed) {
  Status s = run_local(2, test::fast_config(), [](Runtime& rt) {
    std::vector<float> a(4, 1.0f);
    const Tensor t{a.data(), DataType::kFloat32, {4}};
    Status st = rt.grouped_allreduce({"x", "y"}, {t}, {t, t});
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(st.message(), "grouped allreduce: 2 names but 1 input tensors and 2 outputs; the lists must have the same length");
    std::vector<Handle> out;
    st = rt.grouped_allgather({"x"}, {t, t}, &out);
    EXPECT_EQ(st.message(), "grouped allgather: 1 names but 2 input tensors; the lists must have the same length");
    st = rt.grouped_reducescatter({}, {t}, &out);
    EXPECT_EQ(st.message(), "grouped reducescatter: 0 names but 1 input tensors; the lists must have the same length");
    EXPECT_TRUE(rt.allreduce("after", t, t, ReduceOp::kSum).ok());
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

}  // namespace
}  // namespace hvd
