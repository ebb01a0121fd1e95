// The unique-id bootstrap protocol over the in-process transport (ranks are threads): the
// id reaches every member; a failure on any member, or a member that split in a different
// order, fails every member with the same reason instead of hanging. No GPU.
#include "backends/nccl/nccl_bootstrap.h"

#include <gtest/gtest.h>

#include <thread>

#include "hvd/local.h"

namespace hvd::nccl {
namespace {

struct Outcome {
  Status status;
  UniqueIdBytes id{};
};

// Runs share_unique_id on `size` threads; `local(r)` is rank r's readiness, `gen(r)` its
// generation; the root's id is 0,1,2,... (or fails when `root_fails`).
std::vector<Outcome> run_bootstrap(int size, const std::function<Status(int)>& local,
                                   const std::function<uint64_t(int)>& gen,
                                   bool root_fails = false) {
  LocalWorld world(size);
  std::vector<std::unique_ptr<Transport>> ts;
  for (int r = 0; r < size; ++r) ts.push_back(world.transport(r));
  std::vector<Outcome> out(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      auto make_id = [&](UniqueIdBytes* id) {
        if (root_fails) return Status::Internal("ncclGetUniqueId failed: unhandled system error");
        for (size_t i = 0; i < id->size(); ++i) (*id)[i] = static_cast<uint8_t>(i);
        return Status::OK();
      };
      Outcome& o = out[static_cast<size_t>(r)];
      o.status = share_unique_id(*ts[static_cast<size_t>(r)], gen(r), local(r), make_id, &o.id);
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

auto all_ok = [](int) { return Status::OK(); };
auto same_gen = [](int) { return uint64_t{9}; };

TEST(Bootstrap, EveryMemberGetsTheRootsId) {
  for (int size : {1, 2, 3, 7, 8}) {
    const auto out = run_bootstrap(size, all_ok, same_gen);
    for (int r = 0; r < size; ++r) {
      ASSERT_TRUE(out[static_cast<size_t>(r)].status.ok())
          << out[static_cast<size_t>(r)].status.to_string();
      EXPECT_EQ(out[static_cast<size_t>(r)].id[5], 5) << "rank " << r << " of " << size;
      EXPECT_EQ(out[static_cast<size_t>(r)].id[127], 127);
    }
  }
}

TEST(Bootstrap, OneRankWithoutGpuFailsEveryRankWithItsReason) {
  const auto out = run_bootstrap(
      7,
      [](int r) {
        return r == 5 ? Status::Precondition("no CUDA-capable device is visible") : Status::OK();
      },
      same_gen);
  for (int r = 0; r < 7; ++r) {
    const Status& s = out[static_cast<size_t>(r)].status;
    ASSERT_FALSE(s.ok()) << "rank " << r;
    EXPECT_NE(s.message().find("rank 5: no CUDA-capable device"), std::string::npos) << s.message();
  }
}

TEST(Bootstrap, RootFailingToMakeAnIdFailsEveryRank) {
  const auto out = run_bootstrap(4, all_ok, same_gen, /*root_fails=*/true);
  for (int r = 0; r < 4; ++r) {
    const Status& s = out[static_cast<size_t>(r)].status;
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("rank 0: ncclGetUniqueId failed"), std::string::npos) << s.message();
  }
}

TEST(Bootstrap, MembersThatSplitInADifferentOrderFailInsteadOfHanging) {
  const auto out =
      run_bootstrap(8, all_ok, [](int r) { return r == 6 ? uint64_t{10} : uint64_t{9}; });
  for (int r = 0; r < 8; ++r) {
    const Status& s = out[static_cast<size_t>(r)].status;
    ASSERT_FALSE(s.ok()) << "rank " << r;
    EXPECT_NE(s.message().find("generation"), std::string::npos) << s.message();
  }
}

TEST(Bootstrap, AgreeIsOkOnlyWhenEveryoneIs) {
  LocalWorld world(3);
  std::vector<std::unique_ptr<Transport>> ts;
  for (int r = 0; r < 3; ++r) ts.push_back(world.transport(r));
  std::vector<Status> res(3);
  std::vector<std::thread> th;
  for (int r = 0; r < 3; ++r)
    th.emplace_back([&, r] {
      Status first = agree(*ts[static_cast<size_t>(r)], 1, Status::OK());
      Status second = agree(*ts[static_cast<size_t>(r)], 2,
                            r == 1 ? Status::Internal("ncclCommInitRank failed") : Status::OK());
      res[static_cast<size_t>(r)] = first.ok() ? second : Status::Internal("first round failed");
    });
  for (auto& t : th) t.join();
  for (const Status& s : res)
    EXPECT_NE(s.message().find("rank 1: ncclCommInitRank failed"), std::string::npos)
        << s.message();
}

}  // namespace
}  // namespace hvd::nccl
