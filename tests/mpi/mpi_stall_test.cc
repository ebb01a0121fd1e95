// Run with HVD_STALL_CHECK_TIME_SECONDS=1 HVD_STALL_SHUTDOWN_TIME_SECONDS=3: the last rank
// never submits a tensor the others wait on; they must get a clear error, not hang.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "hvd/hvd.h"
#include "hvd/mpi.h"

namespace hvd {
namespace {

double steady_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A transfer that times out says which peer it waited for, not a bare "MPI transfer timed
// out", so that a killed rank is named.
TEST(MpiStall, TimedOutTransferNamesThePeer) {
  std::unique_ptr<Transport> t = make_mpi_world_transport();
  if (t->rank() == 0) {
    char buf[16];
    const int peer = t->size() - 1;
    std::unique_ptr<Request> r = t->irecv(peer, buf, sizeof buf, 987654);  // never sent
    Status s = r->wait(steady_now() + 0.2);
    EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.to_string();
    const std::string want = "receiving 16 bytes from rank " + std::to_string(peer);
    EXPECT_NE(s.message().find(want), std::string::npos) << s.message();
  }
}

TEST(MpiStall, MissingRankIsNamedAndOperationCancelled) {
  const double shutdown_s = runtime()->config().stall_shutdown_time_s;
  ASSERT_GT(shutdown_s, 0) << "run with HVD_STALL_SHUTDOWN_TIME_SECONDS";
  // The missing rank marks its return in a file (the ranks share mpirun's node and parent):
  // the others must have failed, and shut down, before it is back. An order, not a time bound.
  const std::string back = "/tmp/hvd_mpi_stall_back_" + std::to_string(::getppid());
  if (rank() == size() - 1) {
    std::remove(back.c_str());
    // Away long past the stall shutdown time, then back.
    std::this_thread::sleep_for(std::chrono::duration<double>(shutdown_s + 6));
    std::ofstream(back) << "back\n";
    return;
  }
  auto is_back = [&] { return std::ifstream(back).good(); };
  std::vector<float> v(4, 1.0f);
  Tensor t{v.data(), DataType::kFloat32, {4}};
  Status s = allreduce("mpi.lonely", t, t);
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.to_string();
  EXPECT_NE(s.message().find("not by ranks [" + std::to_string(size() - 1) + "]"), std::string::npos) << s.message();
  EXPECT_FALSE(is_back()) << "the allreduce waited for the missing rank";
  // shutdown() after the stall returns within the shutdown time although the missing rank
  // is still away (MPI is then finalized at process exit).
  Status down = shutdown();
  EXPECT_TRUE(down.ok()) << down.to_string();
  EXPECT_FALSE(is_initialized());
  EXPECT_FALSE(is_back()) << "shutdown() waited for the missing rank";
}

}  // namespace
}  // namespace hvd
