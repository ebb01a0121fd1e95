// The one way a world builds a rank's runtime from its seams (hvd/seams.h, start_runtime,
// run_rank) and the local backend's seams (host_seams, make_single_rank_transport).
#include <gtest/gtest.h>

#include <vector>

#include "hvd/local.h"
#include "hvd/runtime.h"
#include "hvd/seams.h"
#include "test_util.h"

namespace hvd {
namespace {

TEST(Seams, HostSeamsOfTheSingleRankWorld) {
  const OwnedSeams s = host_seams(make_single_rank_transport());
  const Seams v = s.view();
  ASSERT_NE(v.platform, nullptr);
  ASSERT_NE(v.transport, nullptr);
  ASSERT_NE(v.cpu, nullptr);
  EXPECT_EQ(v.gpu, nullptr);
  EXPECT_EQ(v.transport->size(), 1);
  EXPECT_EQ(v.transport->rank(), 0);
  EXPECT_EQ(v.cpu->kind(), DeviceKind::kCPU);
  EXPECT_EQ(v.transport->timing(), nullptr);  // real transports have no timing-only trains
}

TEST(Seams, StartRuntimeKeepsTheRuntimeOnlyWhenItStarted) {
  const OwnedSeams s = host_seams(make_single_rank_transport());
  std::unique_ptr<Runtime> rt;
  Config bad = test::fast_config();
  bad.pipeline_chunk = 0;
  Status st = start_runtime(RuntimeOptions{s.view(), bad}, &rt);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
  EXPECT_EQ(rt, nullptr);
  Seams no_transport = s.view();
  no_transport.transport = nullptr;
  st = start_runtime(RuntimeOptions{no_transport, test::fast_config()}, &rt);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
  EXPECT_EQ(rt, nullptr);

  st = start_runtime(RuntimeOptions{s.view(), test::fast_config()}, &rt);
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_NE(rt, nullptr);
  EXPECT_TRUE(rt->running());
  std::vector<float> v{1, 2, 3};
  const Tensor t{v.data(), DataType::kFloat32, {3}};
  EXPECT_TRUE(rt->allreduce("x", t, t, ReduceOp::kSum).ok());
  EXPECT_EQ(v, (std::vector<float>{1, 2, 3}));
  EXPECT_TRUE(rt->shutdown().ok());
}

TEST(Seams, RunRankRunsTheBodyBetweenStartAndShutdown) {
  const OwnedSeams s = host_seams(make_single_rank_transport());
  int calls = 0;
  Status st = run_rank(RuntimeOptions{s.view(), test::fast_config()}, [&](Runtime& rt) {
    ++calls;
    EXPECT_TRUE(rt.running());
    EXPECT_EQ(rt.size(), 1);
  });
  EXPECT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(calls, 1);

  // A failed start is the result, and the body does not run.
  Config bad = test::fast_config();
  bad.cycle_time_ms = -1;
  st = run_rank(RuntimeOptions{s.view(), bad}, [&](Runtime&) { ++calls; });
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace hvd
