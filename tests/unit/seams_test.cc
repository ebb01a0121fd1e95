// The one way a world builds a rank's runtime from its seams (hvd/seams.h, start_runtime,
// run_rank) and the local backend's seams (host_seams, make_single_rank_transport).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
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


// Appends each sized message to one buffer (the control plane's use).
struct AppendAll final : SizedSink {
  std::vector<uint8_t> bytes;
  std::vector<size_t> sizes;
  void* room(size_t n) override {
    sizes.push_back(n);
    bytes.resize(bytes.size() + n);
    return bytes.data() + bytes.size() - n;
  }
};

std::vector<uint8_t> pattern(size_t n, int seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + static_cast<size_t>(seed));
  return v;
}

// Messages received by size (RecvInto::sink) over the in-process transport: empty, small
// and large ones arrive whole, in order, through recv_until, irecv_sized + wait and
// irecv_sized + test; a receive that times out stays posted and gets the message later.
TEST(Transport, SizedMessagesOfAnySize) {
  const std::vector<size_t> sizes = {0, 1, 1016, 1017, 5000, 300000};
  LocalWorld world(2);
  auto t0 = world.transport(0), t1 = world.transport(1);
  std::string got;
  std::thread receiver([&] {
    AppendAll sink;
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::unique_ptr<Request> pending;
      Status s;
      if (i % 3 == 0) {
        s = recv_until(*t1, 0, RecvInto{{}, &sink}, kTagControl, kNoDeadline, &pending);
      } else if (i % 3 == 1) {
        s = t1->irecv_sized(0, &sink, kTagControl)->wait(kNoDeadline);
      } else {
        auto r = t1->irecv_sized(0, &sink, kTagControl);
        while (!r->test()) std::this_thread::yield();
        s = r->wait(kNoDeadline);
      }
      if (!s.ok()) got += "message " + std::to_string(i) + ": " + s.to_string() + "; ";
    }
    // Nothing is sent until the receiver says so: the first wait times out.
    std::unique_ptr<Request> pending;
    auto clock = make_std_platform();
    Status late = recv_until(*t1, 0, RecvInto{{}, &sink}, kTagControl, clock->now() + 0.05, &pending);
    got += late.to_string().substr(0, 7) + (pending ? " pending; " : " lost; ");
    uint8_t go = 1;
    (void)send(*t1, 0, &go, 1, kTagData);
    if (pending) {
      Status s = pending->wait(kNoDeadline);
      if (!s.ok()) got += "late message: " + s.to_string() + "; ";
    }
    std::vector<uint8_t> want;
    for (size_t i = 0; i < sizes.size(); ++i) {
      auto p = pattern(sizes[i], static_cast<int>(i));
      want.insert(want.end(), p.begin(), p.end());
    }
    auto last = pattern(3000, 99);
    want.insert(want.end(), last.begin(), last.end());
    std::vector<size_t> want_sizes = sizes;
    want_sizes.push_back(3000);
    got += sink.sizes == want_sizes ? "sizes ok; " : "sizes differ; ";
    got += sink.bytes == want ? "bytes ok" : "bytes differ";
  });
  for (size_t i = 0; i < sizes.size(); ++i) {
    auto p = pattern(sizes[i], static_cast<int>(i));
    Status s = t0->isend(1, p.data(), p.size(), kTagControl)->wait(kNoDeadline);
    if (!s.ok()) ADD_FAILURE() << s.to_string();
  }
  uint8_t go = 0;
  (void)recv(*t0, 1, &go, 1, kTagData);
  auto last = pattern(3000, 99);
  EXPECT_TRUE(t0->isend(1, last.data(), last.size(), kTagControl)->wait(kNoDeadline).ok());
  receiver.join();
  EXPECT_EQ(got, "Timeout pending; sizes ok; bytes ok");
}


// A message sent in pieces and received by size arrives as their concatenation: empty
// pieces, small and large totals, and no bytes at all.
TEST(Transport, SizedMessageFromPiecesIsTheirConcatenation) {
  LocalWorld world(2);
  auto t0 = world.transport(0), t1 = world.transport(1);
  const auto a = pattern(3, 1), b = pattern(1013, 2), c = pattern(70000, 3);
  auto piece = [](const std::vector<uint8_t>& v) { return IoPiece{const_cast<uint8_t*>(v.data()), v.size()}; };
  const std::vector<std::vector<IoPiece>> messages = {
      {piece(a), {nullptr, 0}, piece(b)},  // an empty piece among others
      {piece(b), piece(a), piece(a)},      // pieces of different sizes
      {piece(c), piece(a), piece(b)},      // large
      {{nullptr, 0}},                      // empty
  };
  AppendAll sink;
  std::thread receiver([&] {
    for (size_t i = 0; i < messages.size(); ++i) {
      std::unique_ptr<Request> pending;
      Status s = recv_until(*t1, 0, RecvInto{{}, &sink}, kTagControl, kNoDeadline, &pending);
      if (!s.ok()) ADD_FAILURE() << s.to_string();
    }
  });
  for (const auto& m : messages) {
    Status s = t0->isendv(1, m, kTagControl)->wait(kNoDeadline);
    if (!s.ok()) ADD_FAILURE() << s.to_string();
  }
  receiver.join();
  std::vector<uint8_t> want;
  std::vector<size_t> want_sizes;
  for (const auto& m : messages) {
    size_t n = 0;
    for (const IoPiece& p : m) {
      if (p.bytes) want.insert(want.end(), static_cast<uint8_t*>(p.data), static_cast<uint8_t*>(p.data) + p.bytes);
      n += p.bytes;
    }
    want_sizes.push_back(n);
  }
  EXPECT_EQ(sink.sizes, want_sizes);
  EXPECT_TRUE(sink.bytes == want);
}

// The cycle hook runs on the real loop thread while the thread that set it goes on:
// set_cycle_hook() waits for a hook call in progress, so that once it returns the old hook
// (which refers to its setter's locals) is neither running nor called again.
TEST(Runtime, SetCycleHookWaitsForTheHookCallInProgress) {
  std::atomic<int> entered{0}, calls_after{0};
  std::atomic<bool> release{false}, cleared{false}, returned{false};
  std::string got;
  Status s = run_local(1, test::fast_config(), [&](Runtime& rt) {
    ASSERT_TRUE(rt.paced_cycles());
    rt.set_cycle_hook([&](double) {
      if (cleared) ++calls_after;
      if (entered++ > 0) return;
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (!release && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    });
    while (entered == 0) std::this_thread::yield();  // the loop is inside the hook
    std::thread setter([&] {
      rt.set_cycle_hook(nullptr);
      cleared = true;
      returned = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    got += returned ? "returned early; " : "waited; ";
    release = true;
    setter.join();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // ~100 more cycles
    got += calls_after == 0 ? "no call after" : "called after clearing";
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(got, "waited; no call after");
}

}  // namespace
}  // namespace hvd
