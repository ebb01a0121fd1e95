// hvdbench's NCCL baseline (bench/hvdbench/nccl_baseline.h): ncclAllReduce timed straight on
// the NCCL world's communicator. Moved here with the helpers from the runtime's hvd/nccl.h.
#include "nccl_baseline.h"

#include <gtest/gtest.h>

#include "gpu_fixture.h"

namespace hvd::test {
namespace {

TEST(NcclBaselineNoGpu, DirectNcclTimingRejectsANonNcclTransport) {
  LocalWorld world(1);
  auto host = world.transport(0);
  double sec = -1;
  EXPECT_EQ(bench::time_direct_nccl_allreduce(*host, 1 << 20, 1, 5, &sec).code(), StatusCode::kInvalidArgument);
  bench::DirectAllreduce what;  // no device buffers either
  EXPECT_EQ(bench::time_direct_nccl_allreduce(*host, what, &sec).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sec, -1);
}

using DirectNccl = GpuTest;

TEST_F(DirectNccl, TimesNcclAllreduceOnTheWorldCommunicator) {
  double sec = 0;
  const Status s = bench::time_direct_nccl_allreduce(*nccl_, 64 << 20, 2, 10, &sec);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_GT(sec, 0);
  EXPECT_LT(sec, 1.0);
}

}  // namespace
}  // namespace hvd::test
