// Without a GPU the backend must say so with a Status, never crash or hang: on CI machines
// (no driver, or no device) cuda_available() is false and make_nccl_world() fails cleanly
// on every rank. On a GPU machine these tests check the positive side instead.
#include <gtest/gtest.h>

#include <thread>

#include "hvd/local.h"
#include "hvd/nccl.h"

namespace hvd {
namespace {

TEST(NoGpu, CudaAvailableExplainsWhyNot) {
  std::string why;
  const bool ok = cuda_available(&why);
  if (ok) {
    EXPECT_TRUE(why.empty());
    GTEST_SKIP() << "a GPU is present; the no-GPU path is not exercised here";
  }
  EXPECT_FALSE(why.empty());
  EXPECT_TRUE(why.find("cudaGetDeviceCount") != std::string::npos ||
              why.find("no CUDA-capable") != std::string::npos)
      << why;
  EXPECT_FALSE(cuda_available(nullptr));  // a null `why` is allowed
}

TEST(NoGpu, MakeNcclWorldFailsWithPreconditionOnEveryRank) {
  std::string why;
  if (cuda_available(&why)) GTEST_SKIP() << "a GPU is present";
  for (int size : {1, 3}) {
    LocalWorld world(size);
    std::vector<std::unique_ptr<Transport>> hosts;
    for (int r = 0; r < size; ++r) hosts.push_back(world.transport(r));
    std::vector<Status> res(static_cast<size_t>(size));
    std::vector<std::thread> th;
    for (int r = 0; r < size; ++r)
      th.emplace_back([&, r] {
        std::unique_ptr<Transport> t;
        std::unique_ptr<Device> d;
        res[static_cast<size_t>(r)] = make_nccl_world(*hosts[static_cast<size_t>(r)], 0, &t, &d);
        if (t || d) res[static_cast<size_t>(r)] = Status::Internal("outputs set on failure");
      });
    for (auto& t : th) t.join();
    for (const Status& s : res) {
      EXPECT_EQ(s.code(), StatusCode::kPrecondition) << s.to_string();
      EXPECT_NE(s.message().find("needs a GPU"), std::string::npos) << s.message();
    }
  }
}

TEST(NoGpu, NullOutputsAreRejected) {
  LocalWorld world(1);
  auto host = world.transport(0);
  EXPECT_EQ(make_nccl_world(*host, 0, nullptr, nullptr).code(), StatusCode::kInvalidArgument);
}

TEST(NoGpu, VersionStringNamesNcclAndCuda) {
  const std::string v = nccl_version_string();
  EXPECT_EQ(v.rfind("NCCL 2.", 0), 0u) << v;
  EXPECT_NE(v.find("CUDA runtime"), std::string::npos) << v;
}

}  // namespace
}  // namespace hvd
