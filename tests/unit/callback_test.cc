// OpRequest::on_done: the completion callback a framework kernel (hvd.tensorflow's
// AsyncOpKernels) uses instead of a thread blocked in wait(). At 2 to 4 in-process ranks:
// every request's callback runs exactly once, after its results are in place (read in the
// callback), on the loop's thread; requests refused up front call it before enqueue()
// returns; a group enqueued with enqueue_group fuses; pending requests failed by shutdown
// and by a removed process set call it with the failure.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "test_util.h"

namespace hvd {
namespace {

// What the callbacks of one rank saw.
struct Seen {
  std::mutex mu;
  std::vector<Status> statuses;
  std::vector<std::vector<int64_t>> shapes;
  std::atomic<int> calls{0};
  std::atomic<int> on_caller_thread{0};
};

DoneCallback recorder(Seen* seen, size_t slot, std::thread::id caller) {
  return [seen, slot, caller](const Status& s, const OpHandle& h) {
    std::unique_lock<std::mutex> lk(seen->mu);
    if (seen->statuses.size() <= slot) {
      seen->statuses.resize(slot + 1);
      seen->shapes.resize(slot + 1);
    }
    seen->statuses[slot] = s;
    seen->shapes[slot] = h.output_shape();
    if (std::this_thread::get_id() == caller) ++seen->on_caller_thread;
    ++seen->calls;
  };
}

void wait_for_calls(Seen& seen, int n) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (seen.calls.load() < n && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

OpRequest allreduce_req(const std::string& name, std::vector<float>* in, std::vector<float>* out) {
  OpRequest q;
  q.op = OpType::kAllreduce;
  q.name = name;
  q.reduce_op = ReduceOp::kSum;
  q.input = Tensor{in->data(), DataType::kFloat32, {static_cast<int64_t>(in->size())}};
  q.output = Tensor{out->data(), DataType::kFloat32, {static_cast<int64_t>(out->size())}};
  return q;
}

class CallbackAtSizes : public ::testing::TestWithParam<int> {};

TEST_P(CallbackAtSizes, EveryRequestCallsBackOnceWithItsResultsInPlace) {
  const int size = GetParam();
  constexpr int kTensors = 24;
  std::atomic<int> wrong{0};
  Status s = run_local(size, test::fast_config(), [&](Runtime& rt) {
    const int r = rt.rank();
    Seen seen;
    std::vector<std::vector<float>> ins(kTensors), outs(kTensors);
    std::vector<std::vector<float>> sums(kTensors);
    const auto me = std::this_thread::get_id();
    for (int i = 0; i < kTensors; ++i) {
      ins[i].assign(static_cast<size_t>(i + 1), static_cast<float>(r + i));
      outs[i].assign(ins[i].size(), -1.0f);
      OpRequest q = allreduce_req("t" + std::to_string(i), &ins[i], &outs[i]);
      // The callback reads the output it was given: the result must be there already.
      std::vector<float>* out = &outs[i];
      const float want = static_cast<float>(size * i + size * (size - 1) / 2);
      DoneCallback rec = recorder(&seen, static_cast<size_t>(i), me);
      q.on_done = [rec, out, want, &wrong](const Status& st, const OpHandle& h) {
        for (float v : *out) wrong += v != want;
        rec(st, h);
      };
      rt.enqueue(std::move(q));  // the handle is dropped: only the callback reports
    }
    // An allgather whose rank-dependent first dimension the callback reads from the handle.
    std::vector<int32_t> g(static_cast<size_t>(r + 1), r);
    OpRequest q;
    q.op = OpType::kAllgather;
    q.name = "gather";
    q.input = Tensor{g.data(), DataType::kInt32, {r + 1}};
    q.on_done = recorder(&seen, kTensors, me);
    rt.enqueue(std::move(q));
    wait_for_calls(seen, kTensors + 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a second call would show
    EXPECT_EQ(seen.calls.load(), kTensors + 1) << "rank " << r;
    EXPECT_EQ(seen.on_caller_thread.load(), 0) << "callbacks of queued requests run on the loop";
    std::unique_lock<std::mutex> lk(seen.mu);
    for (const Status& st : seen.statuses) EXPECT_TRUE(st.ok()) << st.to_string();
    ASSERT_EQ(seen.shapes.size(), static_cast<size_t>(kTensors + 1));
    EXPECT_EQ(seen.shapes[kTensors], std::vector<int64_t>{size * (size + 1) / 2});
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_P(CallbackAtSizes, AGroupCallsBackPerMemberAndFusesIntoOneResponse) {
  const int size = GetParam();
  constexpr int kMembers = 16;
  std::atomic<int> responses_max{0};
  Status s = run_local(size, test::fast_config(), [&](Runtime& rt) {
    Seen seen;
    std::vector<std::vector<float>> ins(kMembers, std::vector<float>(8, 1.0f)), outs(kMembers, std::vector<float>(8));
    std::vector<OpRequest> reqs;
    for (int i = 0; i < kMembers; ++i) {
      reqs.push_back(allreduce_req("g" + std::to_string(i), &ins[i], &outs[i]));
      reqs.back().on_done = recorder(&seen, static_cast<size_t>(i), std::this_thread::get_id());
    }
    const int64_t before = rt.stats().responses;
    std::vector<Handle> hs = rt.enqueue_group(std::move(reqs));
    EXPECT_EQ(hs.size(), static_cast<size_t>(kMembers));
    wait_for_calls(seen, kMembers);
    EXPECT_EQ(seen.calls.load(), kMembers);
    for (auto& h : hs) EXPECT_TRUE(h->poll());
    for (auto& o : outs) EXPECT_EQ(o[0], static_cast<float>(size));
    int64_t n = rt.stats().responses - before;
    int cur = responses_max.load();
    while (n > cur && !responses_max.compare_exchange_weak(cur, static_cast<int>(n))) {
    }
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(responses_max.load(), 1) << "the 16 members of one group are one fused allreduce";
}

INSTANTIATE_TEST_SUITE_P(Ranks, CallbackAtSizes, ::testing::Values(2, 3, 4));

TEST(Callback, ARefusedRequestCallsBackBeforeEnqueueReturns) {
  Status s = run_local(2, test::fast_config(), [&](Runtime& rt) {
    std::vector<float> v(4);
    std::atomic<int> calls{0};
    Status got;
    OpRequest q;
    q.op = OpType::kBroadcast;
    q.name = "bad_root";
    q.root = 7;
    q.input = q.output = Tensor{v.data(), DataType::kFloat32, {4}};
    q.on_done = [&](const Status& st, const OpHandle&) {
      got = st;
      ++calls;
    };
    Handle h = rt.enqueue(std::move(q));
    EXPECT_EQ(calls.load(), 1);
    EXPECT_EQ(got.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(got.message().find("root rank 7"), std::string::npos) << got.to_string();
    EXPECT_EQ(h->wait().code(), StatusCode::kInvalidArgument);
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

TEST(Callback, AStoppedRuntimeRefusesWithACallback) {
  test::on_local_ranks(1, [](OwnedSeams& seams) {
    Runtime rt(RuntimeOptions{seams.view(), test::fast_config()});
    std::vector<float> v(2), o(2);
    OpRequest q = allreduce_req("never_started", &v, &o);
    Status got;
    q.on_done = [&](const Status& st, const OpHandle&) { got = st; };
    rt.enqueue(std::move(q));
    EXPECT_EQ(got.code(), StatusCode::kPrecondition) << got.to_string();
  });
}

// Rank 0 submits a tensor no other rank ever submits, then every rank shuts down: the
// pending request fails, and its callback hears it (the shutdown path).
TEST(Callback, ShutdownFailsAPendingRequestThroughItsCallback) {
  std::atomic<int> calls{0};
  Status got;
  std::vector<float> v(3), o(3);
  Status s = run_local(3, test::fast_config(), [&](Runtime& rt) {
    if (rt.rank() != 0) return;
    OpRequest q = allreduce_req("only_rank0", &v, &o);
    q.on_done = [&](const Status& st, const OpHandle&) {
      got = st;
      ++calls;
    };
    rt.enqueue(std::move(q));
  });
  EXPECT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(got.code(), StatusCode::kAborted) << got.to_string();
}

// A request pending in a process set when the set is removed fails through its callback.
TEST(Callback, ARemovedProcessSetFailsAPendingRequestThroughItsCallback) {
  std::atomic<int> aborted{0};
  Status s = run_local(2, test::fast_config(), [&](Runtime& rt) {
    int id = -1;
    ASSERT_TRUE(rt.add_process_set({0, 1}, &id).ok());
    std::vector<float> v(2), o(2);
    std::atomic<int> calls{0};
    if (rt.rank() == 0) {
      OpRequest q = allreduce_req("lonely", &v, &o);
      q.process_set = id;
      q.on_done = [&](const Status& st, const OpHandle&) {
        aborted += st.code() == StatusCode::kAborted;
        ++calls;
      };
      rt.enqueue(std::move(q));
    }
    ASSERT_TRUE(rt.remove_process_set(id).ok());
    if (rt.rank() == 0) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (calls.load() == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      EXPECT_EQ(calls.load(), 1);
    }
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(aborted.load(), 1);
}

}  // namespace
}  // namespace hvd
