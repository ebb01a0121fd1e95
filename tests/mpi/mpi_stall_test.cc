// Run with HVD_STALL_CHECK_TIME_SECONDS=1 HVD_STALL_SHUTDOWN_TIME_SECONDS=3: the last rank
// never submits a tensor the others wait on; they must get a clear error, not hang.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "hvd/hvd.h"

namespace hvd {
namespace {

TEST(MpiStall, MissingRankIsNamedAndOperationCancelled) {
  ASSERT_GT(runtime()->config().stall_shutdown_time_s, 0) << "run with HVD_STALL_SHUTDOWN_TIME_SECONDS";
  const auto t0 = std::chrono::steady_clock::now();
  if (rank() == size() - 1) {
    std::this_thread::sleep_for(std::chrono::duration<double>(runtime()->config().stall_shutdown_time_s + 1.5));
    return;
  }
  std::vector<float> v(4, 1.0f);
  Tensor t{v.data(), DataType::kFloat32, {4}};
  Status s = allreduce("mpi.lonely", t, t);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.to_string();
  EXPECT_NE(s.message().find("not by ranks [" + std::to_string(size() - 1) + "]"), std::string::npos) << s.message();
  EXPECT_LT(waited, runtime()->config().stall_shutdown_time_s + 2.0);
}

}  // namespace
}  // namespace hvd
