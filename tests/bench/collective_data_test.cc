// The --check data of collective mode: expected values agree with a brute-force reduction.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "collective_mode.h"

namespace hvd::bench {
namespace {

double combine(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::kMin: return std::min(a, b);
    case ReduceOp::kMax: return std::max(a, b);
    case ReduceOp::kProduct: return a * b;
    default: return a + b;
  }
}

TEST(CollectiveData, ReductionsMatchBruteForce) {
  for (int np : {1, 2, 3, 4, 5, 7, 8}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMin, ReduceOp::kMax,
                        ReduceOp::kProduct}) {
      const int64_t count = 6 * np;
      for (int64_t i = 0; i < count; ++i) {
        double want = input_value("allreduce", op, 0, i, np, count);
        for (int r = 1; r < np; ++r)
          want = combine(op, want, input_value("allreduce", op, r, i, np, count));
        if (op == ReduceOp::kAverage) want /= np;
        EXPECT_DOUBLE_EQ(expected_value("allreduce", op, 0, i, np, count), want)
            << "np " << np << " i " << i;
        // reducescatter: rank me holds block me of the same result.
        const int me = static_cast<int>(i / (count / np));
        EXPECT_DOUBLE_EQ(expected_value("reducescatter", op, me, i % (count / np), np, count), want);
      }
    }
  }
}

TEST(CollectiveData, MovesMatchTheirSources) {
  for (int np : {1, 2, 3, 4}) {
    const int64_t count = 5 * np, k = 5;
    for (int me = 0; me < np; ++me) {
      for (int64_t i = 0; i < count; ++i) {
        const int src = static_cast<int>(i / k);
        EXPECT_EQ(expected_value("allgather", ReduceOp::kSum, me, i, np, count),
                  input_value("allgather", ReduceOp::kSum, src, i % k, np, count));
        // alltoall: block src of my output is block `me` of rank src's input.
        EXPECT_EQ(expected_value("alltoall", ReduceOp::kSum, me, i, np, count),
                  input_value("alltoall", ReduceOp::kSum, src, me * k + i % k, np, count));
        EXPECT_EQ(expected_value("broadcast", ReduceOp::kSum, me, i, np, count),
                  input_value("broadcast", ReduceOp::kSum, 0, i, np, count));
      }
    }
  }
}

TEST(CollectiveData, ElementsRoundTripInEveryType) {
  for (DataType dt : {DataType::kUInt8, DataType::kInt8, DataType::kInt32, DataType::kInt64,
                      DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32,
                      DataType::kFloat64}) {
    std::vector<uint8_t> buf(8 * 16);
    for (int i = 0; i < 16; ++i) set_element(buf.data(), dt, i, i * 3);
    for (int i = 0; i < 16; ++i) {
      EXPECT_EQ(get_element(buf.data(), dt, i), i * 3) << dtype_name(dt);
      EXPECT_TRUE(matches(get_element(buf.data(), dt, i), i * 3, dt, ReduceOp::kSum));
    }
    EXPECT_FALSE(matches(5, 6, dt, ReduceOp::kSum));
  }
  EXPECT_TRUE(matches(2, 2.5, DataType::kInt32, ReduceOp::kAverage));
}

TEST(CollectiveData, CountsAreWholeBlocks) {
  EXPECT_EQ(collective_count("allreduce", 4096, 4, 3), 1024);
  EXPECT_EQ(collective_count("allgather", 4096, 4, 3), 1023);
  EXPECT_EQ(collective_count("alltoall", 16, 4, 4), 4);
  // Less than one element (one block of np): 0, as nccl-tests prints it, not rounded up.
  EXPECT_EQ(collective_count("alltoall", 8, 4, 4), 0);
  EXPECT_EQ(collective_count("allgather", 8, 4, 3), 0);
  EXPECT_EQ(collective_count("allreduce", 2, 4, 4), 0);
  EXPECT_EQ(collective_count("broadcast", 2, 4, 4), 0);
}

}  // namespace
}  // namespace hvd::bench
