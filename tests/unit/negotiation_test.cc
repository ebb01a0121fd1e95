// Negotiation behaviour: fusion, the response cache, ranks that disagree, duplicate names,
// the stall inspector, and the timeline file.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/fusion.h"
#include "hvd/local.h"
#include "hvd/timeline.h"
#include "test_util.h"

namespace hvd {
namespace {

TEST(Fusion, LooksAheadPastNonMatchingResponses) {
  auto ar = [](const char* n, int64_t c, DataType dt) {
    Response r;
    r.op = OpType::kAllreduce;
    r.dtype = dt;
    r.names = {n};
    r.counts = {c};
    return r;
  };
  std::vector<Response> in = {ar("a", 10, DataType::kFloat32), ar("b", 10, DataType::kFloat64),
                              ar("c", 10, DataType::kFloat32), ar("d", 100, DataType::kFloat32),
                              ar("e", 2, DataType::kFloat64)};
  auto out = fuse_responses(in, 100);  // 100 bytes: a+c fit (80), d (400) does not
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].names, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(out[1].names, (std::vector<std::string>{"b", "e"}));
  EXPECT_EQ(out[2].names, (std::vector<std::string>{"d"}));
  EXPECT_EQ(fuse_responses(in, 0).size(), 5u);
}

// Submits `n` small tensors per step for `steps` steps; returns rank 0's stats.
RuntimeStats many_small(Config cfg, int size, int n, int steps) {
  RuntimeStats stats;
  std::mutex mu;
  Status s = run_local(size, cfg, [&](Runtime& rt) {
    for (int step = 0; step < steps; ++step) {
      std::vector<std::vector<float>> bufs(static_cast<size_t>(n), std::vector<float>(16, 1.0f));
      std::vector<Handle> hs;
      for (int i = 0; i < n; ++i) {
        Tensor t{bufs[static_cast<size_t>(i)].data(), DataType::kFloat32, {16}};
        hs.push_back(rt.allreduce_async(std::string("w").append(std::to_string(i)), t, t, ReduceOp::kSum));
      }
      for (auto& h : hs) ASSERT_TRUE(h->wait().ok());
      for (auto& b : bufs) ASSERT_FLOAT_EQ(b[0], static_cast<float>(size));
    }
    std::lock_guard<std::mutex> lk(mu);
    if (rt.rank() == 0) stats = rt.stats();
  });
  EXPECT_TRUE(s.ok()) << s.to_string();
  return stats;
}

TEST(Fusion, ManySmallAsyncTensorsAreFused) {
  Config cfg = test::fast_config();
  cfg.cycle_time_ms = 5;  // a long cycle collects all 200 tensors
  RuntimeStats fused = many_small(cfg, 3, 200, 1);
  EXPECT_EQ(fused.tensors, 200);
  EXPECT_LT(fused.responses, 20) << "200 tensors should travel in a few fused responses";
  cfg.fusion_threshold = 0;
  RuntimeStats unfused = many_small(cfg, 3, 200, 1);
  EXPECT_EQ(unfused.responses, 200);
}

TEST(ResponseCache, RepeatedStepsHitTheCache) {
  RuntimeStats st = many_small(test::fast_config(), 4, 50, 4);
  EXPECT_EQ(st.cache_misses, 50) << "only the first step is negotiated by the coordinator";
  EXPECT_EQ(st.cache_hits, 150);
  Config off = test::fast_config();
  off.cache_capacity = 0;
  RuntimeStats none = many_small(off, 4, 50, 4);
  EXPECT_EQ(none.cache_hits, 0);
  EXPECT_EQ(none.cache_misses, 200);
}

TEST(ResponseCache, SmallCapacityEvictsAndStillAgrees) {
  Config cfg = test::fast_config();
  cfg.cache_capacity = 7;  // fewer entries than tensors: evictions every step
  RuntimeStats st = many_small(cfg, 3, 20, 3);
  EXPECT_EQ(st.tensors, 60);
}

TEST(ResponseCache, ChangedShapeIsRenegotiated) {
  Status s = run_local(3, test::fast_config(), [](Runtime& rt) {
    for (int64_t n : {4, 4, 8, 8, 4}) {
      std::vector<float> v(static_cast<size_t>(n), 1.0f);
      Tensor t{v.data(), DataType::kFloat32, {n}};
      Status st = rt.allreduce("same_name", t, t, ReduceOp::kSum);
      ASSERT_TRUE(st.ok()) << st.to_string();
      for (float x : v) ASSERT_FLOAT_EQ(x, 3.0f);
    }
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

// Every rank must receive the same error; collects them.
std::vector<Status> disagree(const std::function<Handle(Runtime&)>& submit, int size = 3) {
  std::vector<Status> out(static_cast<size_t>(size));
  Status s = run_local(size, test::fast_config(), [&](Runtime& rt) {
    out[static_cast<size_t>(rt.rank())] = submit(rt)->wait();
  });
  EXPECT_TRUE(s.ok()) << s.to_string();
  return out;
}

void expect_same_error(const std::vector<Status>& all, const std::string& needle) {
  for (const Status& st : all) {
    EXPECT_EQ(st.code(), StatusCode::kMismatch) << st.to_string();
    EXPECT_NE(st.message().find(needle), std::string::npos) << st.message();
    EXPECT_EQ(st.message(), all[0].message());
  }
}

// Adasum is a reduction like the others in negotiation: a rank asking for Sum or Average
// where the others ask for Adasum fails on every rank (4 ranks: Adasum needs a power of two).
TEST(Mismatch, AdasumAgainstSumAndAverage) {
  static float bufs[4][8];
  expect_same_error(disagree([](Runtime& rt) {
    Tensor t{bufs[rt.rank()], DataType::kFloat32, {4}};
    return rt.allreduce_async("x", t, t, rt.rank() == 3 ? ReduceOp::kSum : ReduceOp::kAdasum);
  }, 4), "Mismatched reduction operations: one rank requested adasum, but another rank requested sum");
  expect_same_error(disagree([](Runtime& rt) {
    Tensor t{bufs[rt.rank()], DataType::kFloat32, {4}};
    return rt.allreduce_async("x", t, t, rt.rank() == 0 ? ReduceOp::kAverage : ReduceOp::kAdasum);
  }, 4), "Mismatched reduction operations: one rank requested average, but another rank requested adasum");
}

TEST(Mismatch, ShapesDtypesOpsRootsAndScales) {
  // One buffer per rank, alive until the handles are waited on.
  static float bufs[8][64];
  #define buf_of(rt) bufs[(rt).rank()]
  expect_same_error(disagree([](Runtime& rt) {
    const int64_t n = rt.rank() == 1 ? 3 : 4;
    Tensor t{buf_of(rt), DataType::kFloat32, {n}};
    return rt.allreduce_async("x", t, t);
  }), "Mismatched allreduce tensor shapes: One rank sent a tensor of shape [4], but another rank sent a tensor of shape [3]");
  expect_same_error(disagree([](Runtime& rt) {
    Tensor t{buf_of(rt), rt.rank() == 2 ? DataType::kInt32 : DataType::kFloat32, {4}};
    return rt.allreduce_async("x", t, t);
  }), "Mismatched data types");
  expect_same_error(disagree([](Runtime& rt) {
    Tensor t{buf_of(rt), DataType::kFloat32, {4}};
    return rt.allreduce_async("x", t, t, rt.rank() == 0 ? ReduceOp::kMax : ReduceOp::kSum);
  }), "Mismatched reduction operations");
  expect_same_error(disagree([](Runtime& rt) {
    Tensor t{buf_of(rt), DataType::kFloat32, {4}};
    return rt.broadcast_async("x", t, rt.rank() == 0 ? 1 : 0);
  }), "Mismatched broadcast root ranks");
  // Average is lowered to a sum and a postscale at enqueue; ranks that disagree still read
  // what they asked for, not the lowered form.
  expect_same_error(disagree([](Runtime& rt) {
    Tensor t{buf_of(rt), DataType::kFloat32, {4}};
    return rt.allreduce_async("x", t, t, rt.rank() == 0 ? ReduceOp::kAverage : ReduceOp::kSum, 1.0,
                              rt.rank() == 0 ? 1.0 : 1.0 / rt.size());
  }), "Mismatched reduction operations: one rank requested average, but another rank requested sum");
  expect_same_error(disagree([](Runtime& rt) {
    Tensor t{buf_of(rt), DataType::kFloat32, {4}};
    return rt.allreduce_async("x", t, t, ReduceOp::kAverage, 1.0, rt.rank() == 0 ? 3.0 : 1.0);
  }), "Mismatched scale factors: one rank gave prescale 1 and postscale 3, but another rank gave 1 and 1");
  expect_same_error(disagree([](Runtime& rt) {
    Tensor t{buf_of(rt), DataType::kFloat32, {4}};
    return rt.allreduce_async("x", t, t, ReduceOp::kSum, rt.rank() == 1 ? 2.0 : 1.0);
  }), "Mismatched scale factors");
  expect_same_error(disagree([](Runtime& rt) {
    Tensor t{buf_of(rt), DataType::kFloat32, {4}};
    return rt.rank() == 0 ? rt.allgather_async("x", t) : rt.allreduce_async("x", t, t);
  }), "Mismatched collective operations");
}

// The coordinator keeps each distinct request once (ranks index it): the error still
// compares the lowest rank's request with the first rank, in rank order, that differs.
TEST(Mismatch, NamesTheLowestRankAndTheFirstThatDiffers) {
  static float bufs[4][8];
  auto shaped = [](auto shape_of) {
    return disagree([shape_of](Runtime& rt) {
      Tensor t{bufs[rt.rank()], DataType::kFloat32, {shape_of(rt.rank())}};
      return rt.allreduce_async("x", t, t);
    }, 4);
  };
  // Ranks 0 and 2 agree, 1 and 3 send another shape.
  expect_same_error(shaped([](int r) { return int64_t{r % 2 ? 3 : 4}; }),
                    "shape [4], but another rank sent a tensor of shape [3] (tensor 'x', rank 0 vs rank 1)");
  // Only rank 3 differs.
  expect_same_error(shaped([](int r) { return int64_t{r == 3 ? 5 : 4}; }),
                    "shape [4], but another rank sent a tensor of shape [5] (tensor 'x', rank 0 vs rank 3)");
  // Rank 0 is the odd one out.
  expect_same_error(shaped([](int r) { return int64_t{r == 0 ? 2 : 4}; }),
                    "shape [2], but another rank sent a tensor of shape [4] (tensor 'x', rank 0 vs rank 1)");
}

TEST(Errors, DuplicateNameAndBadArgumentsFailOnlyThatCall) {
  Status s = run_local(2, test::fast_config(), [](Runtime& rt) {
    std::vector<float> a(4, 1.0f), b(4, 1.0f);
    Tensor ta{a.data(), DataType::kFloat32, {4}}, tb{b.data(), DataType::kFloat32, {4}};
    Handle h1 = rt.allreduce_async("dup", ta, ta, ReduceOp::kSum);
    Handle h2 = rt.allreduce_async("dup", tb, tb, ReduceOp::kSum);
    Status second = h2->wait();
    EXPECT_EQ(second.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(second.message().find("already pending"), std::string::npos) << second.message();
    EXPECT_TRUE(h1->wait().ok());
    EXPECT_FLOAT_EQ(a[0], 2.0f);
    Status bad = rt.broadcast("b", ta, 5);
    EXPECT_NE(bad.message().find("root rank 5 is outside [0, 2)"), std::string::npos) << bad.message();
    Status bad_out = rt.allreduce("o", ta, Tensor{b.data(), DataType::kFloat32, {2}});
    EXPECT_EQ(bad_out.code(), StatusCode::kInvalidArgument);
    Handle a2a = rt.alltoall_async("a", ta, {1, 1});
    EXPECT_NE(a2a->wait().message().find("splits add up to 2"), std::string::npos);
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

TEST(StallInspector, WarnsNamingMissingRanksThenCancels) {
  Config cfg = test::fast_config();
  cfg.stall_check_time_s = 0.2;
  cfg.stall_shutdown_time_s = 0.6;
  std::ostringstream log;
  std::mutex mu;
  std::vector<Status> results(3);
  std::vector<int> ran(3, 0);
  // run_local with a captured log stream per rank.
  test::on_local_ranks(3, [&](OwnedSeams& seams) {
    const int r = seams.transport->rank();
    std::ostringstream mine;
    (void)run_rank(RuntimeOptions{seams.view(), cfg, nullptr, &mine}, [&](Runtime& rt) {
      ran[static_cast<size_t>(r)] = 1;
      std::vector<float> v(4, 1.0f);
      Tensor tv{v.data(), DataType::kFloat32, {4}};
      if (r != 2) results[static_cast<size_t>(r)] = rt.allreduce("lonely", tv, tv);
      else seams.platform->sleep_for(1.2);  // rank 2 never submits "lonely"
    });
    std::lock_guard<std::mutex> lk(mu);
    log << mine.str();
  });
  EXPECT_EQ(ran, std::vector<int>(3, 1)) << "a runtime did not start";
  EXPECT_NE(log.str().find("Missing ranks: 2: [lonely]"), std::string::npos) << log.str();
  for (int r : {0, 1}) {
    EXPECT_EQ(results[static_cast<size_t>(r)].code(), StatusCode::kTimeout);
    EXPECT_NE(results[static_cast<size_t>(r)].message().find("not by ranks [2]"), std::string::npos)
        << results[static_cast<size_t>(r)].message();
  }
}

// A shutdown time below the warning time cancels at the shutdown time, for a tensor the
// response cache knows and for a new one: the warning here is an hour away, so a cancel that
// waited for it would hold the test until its timeout.
TEST(StallInspector, ShutdownBelowTheWarningTimeDoesNotWaitForTheWarning) {
  Config cfg = test::fast_config();
  cfg.stall_check_time_s = 3600;
  cfg.stall_shutdown_time_s = 0.5;
  std::atomic<bool> cancelled{false};
  Status cached, fresh;
  Status s = run_local(2, cfg, [&](Runtime& rt) {
    std::vector<float> v(4, 1.0f);
    Tensor tv{v.data(), DataType::kFloat32, {4}};
    ASSERT_TRUE(rt.allreduce("known", tv, tv).ok());  // now in the response cache
    if (rt.rank() == 0) {
      Handle a = rt.allreduce_async("known", tv, tv);
      std::vector<float> w(4, 1.0f);
      Tensor tw{w.data(), DataType::kFloat32, {4}};
      Handle b = rt.allreduce_async("new", tw, tw);
      cached = a->wait();
      fresh = b->wait();
      cancelled = true;
    } else {
      while (!cancelled) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // never submits
    }
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
  for (const Status* st : {&cached, &fresh}) {
    EXPECT_EQ(st->code(), StatusCode::kTimeout) << st->to_string();
    EXPECT_NE(st->message().find("not by ranks [1]"), std::string::npos) << st->message();
  }
}

TEST(StallInspector, DeadRankDoesNotHangOthersPastShutdownTime) {
  Config cfg = test::fast_config();
  cfg.stall_check_time_s = 0.1;
  cfg.stall_shutdown_time_s = 0.5;
  std::vector<Status> results(3);
  // Rank 2 "dies": it never starts its runtime (its transport is kept alive, silent). Without
  // the stall shutdown the others would wait for ever (the test's timeout); with it they
  // return kTimeout, which only the stall shutdown gives.
  test::on_local_ranks(3, [&](OwnedSeams& seams) {
    std::ostringstream quiet;
    std::unique_ptr<Runtime> rt;
    results[static_cast<size_t>(seams.transport->rank())] =
        start_runtime(RuntimeOptions{seams.view(), cfg, nullptr, &quiet}, &rt);
  }, /*running=*/2);
  for (int r : {0, 1}) EXPECT_EQ(results[static_cast<size_t>(r)].code(), StatusCode::kTimeout)
                           << results[static_cast<size_t>(r)].to_string();
}

// Rank 1 waits for rank 0, which waits for rank 2, which never answers: rank 0 tells the
// others that rank 2 is gone as it gives up, so rank 1 names rank 2, not rank 0 (alive).
TEST(StallInspector, SurvivorsNameTheRankReallyGone) {
  Config cfg = test::fast_config();
  cfg.stall_check_time_s = 0.5;
  cfg.stall_shutdown_time_s = 2.5;  // a 0.5 s grace for the notice (0.2 of it)
  std::vector<Status> results(3);
  test::on_local_ranks(3, [&](OwnedSeams& seams) {
    std::ostringstream quiet;
    std::unique_ptr<Runtime> rt;
    results[static_cast<size_t>(seams.transport->rank())] =
        start_runtime(RuntimeOptions{seams.view(), cfg, nullptr, &quiet}, &rt);
  }, /*running=*/2);
  for (int r : {0, 1}) {
    const Status& s = results[static_cast<size_t>(r)];
    EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.to_string();
    EXPECT_NE(s.message().find("rank 2"), std::string::npos) << s.to_string();
  }
  EXPECT_NE(results[1].message().find("rank 2 is gone: rank 0, which waited for it"), std::string::npos)
      << results[1].to_string();
}

// A rank's transport that goes silent at its first data transfer once armed: the rank is
// "dead" in the middle of a collective, after the negotiation (its messages are dropped and
// its waits return only when the test is over).
class DiesInTheDataPhase final : public Transport {
 public:
  DiesInTheDataPhase(std::unique_ptr<Transport> t, std::atomic<bool>* armed, std::atomic<bool>* over)
      : t_(std::move(t)), armed_(armed), over_(over) {}
  int rank() const override { return t_->rank(); }
  int size() const override { return t_->size(); }
  int node_of(int r) const override { return t_->node_of(r); }
  std::string name() const override { return t_->name(); }
  std::unique_ptr<Transport> split(int color, int key) override { return t_->split(color, key); }
  std::unique_ptr<Request> isendv(int peer, IoSpan pieces, int tag) override {
    if (dies(tag)) return std::make_unique<Silent>(over_);
    return t_->isendv(peer, pieces, tag);
  }
  std::unique_ptr<Request> irecv_into(int peer, const RecvInto& into, int tag) override {
    if (dies(tag)) return std::make_unique<Silent>(over_);
    return t_->irecv_into(peer, into, tag);
  }

 private:
  class Silent final : public Request {
   public:
    explicit Silent(std::atomic<bool>* over) : over_(over) {}
    bool test() override { return false; }
    Status wait(double) override {
      while (!over_->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return Status::Aborted("test over");
    }

   private:
    std::atomic<bool>* over_;
  };
  bool dies(int tag) {
    if (armed_->load() && tag == kTagData) dead_ = true;
    return dead_;
  }
  std::unique_ptr<Transport> t_;
  std::atomic<bool>* armed_;
  std::atomic<bool>* over_;
  bool dead_ = false;
};

// The same in a collective's data phase: rank 2 goes silent in a 1 MiB allreduce by
// recursive halving-doubling. At 3 ranks rank 0 folds into rank 1 and waits for its result;
// rank 1 waits for rank 2. So rank 0's wait is on a live rank: it must still name rank 2,
// from rank 1's notice.
TEST(StallInspector, SurvivorsNameTheRankGoneInADataTransfer) {
  Config cfg = test::fast_config();
  cfg.stall_check_time_s = 0.5;
  cfg.stall_shutdown_time_s = 2.5;
  cfg.allreduce_algorithm = "rhd";
  std::atomic<bool> armed{false}, over{false};
  std::vector<Status> results(3);
  LocalWorld world(3);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&, r] {
      std::unique_ptr<Transport> t = world.transport(r);
      if (r == 2) t = std::make_unique<DiesInTheDataPhase>(std::move(t), &armed, &over);
      OwnedSeams seams = host_seams(std::move(t));
      std::ostringstream quiet;
      Runtime rt(RuntimeOptions{seams.view(), cfg, nullptr, &quiet});
      if (!rt.start().ok()) return;
      std::vector<float> v(1 << 18, 1.0f);
      Tensor x{v.data(), DataType::kFloat32, {1 << 18}};
      Status first = rt.allreduce("big", x, x, ReduceOp::kSum);  // every rank alive
      if (!first.ok()) {
        results[static_cast<size_t>(r)] = first;
        return;
      }
      if (r == 2) armed = true;
      results[static_cast<size_t>(r)] = rt.allreduce("big", x, x, ReduceOp::kSum);
      if (r != 2) (void)rt.shutdown();
    });
  // Ranks 0 and 1 fail at the stall shutdown time; then the silent rank is released.
  for (int waited = 0; waited < 300 && (results[0].ok() || results[1].ok()); ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  over = true;
  for (auto& t : threads) t.join();
  for (int r : {0, 1}) {
    const Status& s = results[static_cast<size_t>(r)];
    EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.to_string();
    EXPECT_NE(s.message().find("rank 2"), std::string::npos) << "rank " << r << ": " << s.to_string();
    EXPECT_EQ(s.message().find("rank 0 is gone"), std::string::npos) << s.to_string();
    EXPECT_EQ(s.message().find("rank 1 is gone"), std::string::npos) << s.to_string();
  }
  EXPECT_NE(results[0].message().find("rank 2 is gone: rank 1, which waited for it"), std::string::npos)
      << results[0].to_string();
}

TEST(Timeline, EveryRankRecordedAndFileParses) {
  const std::string path = (std::filesystem::temp_directory_path() / "hvd_timeline_test.json").string();
  Config cfg = test::fast_config();
  cfg.timeline = path;
  cfg.timeline_mark_cycles = true;
  Status s = run_local(3, cfg, [](Runtime& rt) {
    for (int i = 0; i < 3; ++i) {
      std::vector<float> a(100, 1.0f), b(100, 2.0f);
      Tensor ta{a.data(), DataType::kFloat32, {100}}, tb{b.data(), DataType::kFloat32, {100}};
      Handle h1 = rt.allreduce_async("a", ta, ta), h2 = rt.allreduce_async("b", tb, tb);
      ASSERT_TRUE(h1->wait().ok());
      ASSERT_TRUE(h2->wait().ok());
    }
  });
  ASSERT_TRUE(s.ok());
  std::ifstream f(path);
  nlohmann::json j = nlohmann::json::parse(f);
  ASSERT_TRUE(j.is_array());
  std::set<int> ranks_with_allreduce;
  std::set<std::string> names;
  for (const auto& e : j) {
    names.insert(e["name"].get<std::string>());
    if (e["name"] == "ALLREDUCE") {
      ranks_with_allreduce.insert(e["pid"].get<int>());
      EXPECT_EQ(e["ph"], "X");
      EXPECT_EQ(e["tid"], kLaneCollective);
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    }
  }
  EXPECT_EQ(ranks_with_allreduce, (std::set<int>{0, 1, 2}));
  for (const char* n : {"NEGOTIATE_ALLREDUCE", "CYCLE_START", "process_name", "thread_name"})
    EXPECT_TRUE(names.count(n)) << n;
  std::filesystem::remove(path);
}

TEST(Timeline, FileIsValidJsonAfterEveryFlush) {
  const std::string path = (std::filesystem::temp_directory_path() / "hvd_timeline_valid.json").string();
  StatusOr<std::unique_ptr<TimelineWriter>> opened = TimelineWriter::open(path);
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  std::unique_ptr<TimelineWriter> w = std::move(*opened);
  auto parse_count = [&] {
    std::ifstream f(path);
    return nlohmann::json::parse(f).size();
  };
  EXPECT_EQ(parse_count(), 0u);
  w->declare_rank(0, "rank \"0\"");
  w->flush();
  EXPECT_EQ(parse_count(), 6u);
  w->complete(0, 2, "ALLREDUCE", "communication", 1.0, 2.0, "\"bytes\":4");
  w->flush();
  EXPECT_EQ(parse_count(), 7u);
  w.reset();
  std::filesystem::remove(path);
}

TEST(Timeline, OpenInAMissingDirectoryNamesThePath) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "hvd_no_such_dir" / "timeline.json").string();
  StatusOr<std::unique_ptr<TimelineWriter>> opened = TimelineWriter::open(path);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(opened.status().message().find("cannot open timeline file '" + path + "'"), std::string::npos)
      << opened.status().message();
  // Through a runtime: run_local refuses to start and says why.
  Config cfg = test::fast_config();
  cfg.timeline = path;
  const Status s = run_local(2, cfg, [](Runtime&) { ADD_FAILURE() << "ran without its timeline"; });
  EXPECT_NE(s.message().find("cannot open timeline file"), std::string::npos) << s.to_string();
}

TEST(Shutdown, PendingOperationFailsWhenAnotherRankShutsDown) {
  Status s = run_local(2, test::fast_config(), [](Runtime& rt) {
    if (rt.rank() == 0) return;  // rank 0 shuts down at once
    std::vector<float> v(4, 1.0f);
    Tensor t{v.data(), DataType::kFloat32, {4}};
    Status st = rt.allreduce("never", t, t);
    EXPECT_EQ(st.code(), StatusCode::kAborted) << st.to_string();
    EXPECT_NE(st.message().find("shut down"), std::string::npos);
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

TEST(Start, RanksWithDifferentKnobsAllFailClearly) {
  std::vector<Status> results(2);
  test::on_local_ranks(2, [&](OwnedSeams& seams) {
    const int r = seams.transport->rank();
    Config cfg = test::fast_config();
    if (r == 1) cfg.fusion_threshold = 1 << 20;
    std::unique_ptr<Runtime> rt;
    results[static_cast<size_t>(r)] = start_runtime(RuntimeOptions{seams.view(), cfg}, &rt);
  });
  for (const Status& st : results) {
    EXPECT_EQ(st.code(), StatusCode::kMismatch);
    EXPECT_NE(st.message().find("fusion_threshold=1048576"), std::string::npos) << st.message();
  }
}

}  // namespace
}  // namespace hvd

namespace hvd {
namespace {

// Fused responses run the ring over the tensors in place (host memory); scale factors,
// averaging and a joined rank's identity must still apply to every piece.
TEST(Fusion, InPlaceFusedPiecesWithScalesAverageAndJoin) {
  for (const char* alg : {"ring", "rhd"}) {
    Config cfg = test::fast_config();
    cfg.cycle_time_ms = 5;
    cfg.allreduce_algorithm = alg;
    Status s = run_local(4, cfg, [](Runtime& rt) {
      if (rt.rank() == 3) {  // rank 3 has no data: it joins and contributes zeros
        ASSERT_TRUE(rt.join().ok());
        return;
      }
      std::vector<std::vector<float>> in(30), out(30);
      std::vector<Handle> hs;
      for (int i = 0; i < 30; ++i) {
        in[i].assign(static_cast<size_t>(7 + i), static_cast<float>(rt.rank() + i));
        out[i].assign(in[i].size(), -1.0f);
        Tensor ti{in[i].data(), DataType::kFloat32, {static_cast<int64_t>(in[i].size())}};
        Tensor to{out[i].data(), DataType::kFloat32, {static_cast<int64_t>(in[i].size())}};
        hs.push_back(rt.allreduce_async(std::string("p").append(std::to_string(i)), ti, to, ReduceOp::kAverage, 2.0, 3.0));
      }
      for (int i = 0; i < 30; ++i) {
        ASSERT_TRUE(hs[static_cast<size_t>(i)]->wait().ok());
        // ranks 0..2 contribute r + i, rank 3 zero: avg over 4 ranks, × 2 × 3.
        const float want = 6.0f * static_cast<float>(3 * i + 3) / 4.0f;
        for (float x : out[static_cast<size_t>(i)]) ASSERT_FLOAT_EQ(x, want) << "tensor " << i;
        ASSERT_FLOAT_EQ(in[static_cast<size_t>(i)][0], static_cast<float>(rt.rank() + i));
      }
      ASSERT_TRUE(rt.join().ok());
    });
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
}

}  // namespace
}  // namespace hvd

namespace hvd {
namespace {

TEST(Cycle, EventDrivenLoopWithZeroCycleTime) {
  Config cfg = test::fast_config();
  cfg.cycle_time_ms = 0;
  RuntimeStats st = many_small(cfg, 3, 20, 5);
  EXPECT_EQ(st.tensors, 100);
  EXPECT_EQ(st.cache_misses, 20);
}

// Each rank runs `threads` callers that make `calls` blocking allreduces each (distinct
// names per thread, so the calls of one rank's threads interleave in every cycle) and
// checks every result. Returns the ranks' stats summed.
RuntimeStats blocking_callers(Config cfg, int size, int threads, int calls) {
  RuntimeStats sum;
  std::mutex mu;
  std::atomic<int> wrong{0};
  Status s = run_local(size, cfg, [&](Runtime& rt) {
    std::vector<std::thread> ts;
    for (int th = 0; th < threads; ++th)
      ts.emplace_back([&, th] {
        std::string name = "t";
        name += std::to_string(th);
        for (int i = 0; i < calls; ++i) {
          std::vector<float> v(33, static_cast<float>(rt.rank() + th + i));
          Tensor t{v.data(), DataType::kFloat32, {33}};
          Status st = rt.allreduce(name, t, t, ReduceOp::kSum);
          const float want = static_cast<float>(size * (th + i) + size * (size - 1) / 2);
          if (!st.ok() || v[0] != want || v[32] != want) ++wrong;
        }
      });
    for (auto& t : ts) t.join();
    const RuntimeStats st = rt.stats();
    std::lock_guard<std::mutex> lk(mu);
    sum.cycles += st.cycles;
    sum.caller_cycles += st.caller_cycles;
    sum.tensors += st.tensors;
  });
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(wrong.load(), 0);
  return sum;
}

TEST(Cycle, BlockedCallerRunsTheCycleItselfWhenTheLoopIsIdle) {
  Config cfg = test::fast_config();
  cfg.cycle_time_ms = 0;
  // One caller per rank: nearly every cycle that carries its call is run by the caller
  // (the loop thread only takes a cycle that began while it was awake anyway).
  RuntimeStats st = blocking_callers(cfg, 4, 1, 200);
  EXPECT_EQ(st.tensors, 4 * 200);
  EXPECT_GT(st.caller_cycles, st.cycles / 2) << st.caller_cycles << " of " << st.cycles;
  // Several callers per rank: one drives, the others wait for it or for the loop; all
  // results still right, nothing hangs.
  st = blocking_callers(cfg, 3, 3, 100);
  EXPECT_EQ(st.tensors, 3 * 3 * 100);
  EXPECT_GT(st.caller_cycles, 0);
  // The knob off, a paced loop, or autotune: only the loop thread runs cycles.
  for (int variant = 0; variant < 3; ++variant) {
    Config c = cfg;
    if (variant == 0) c.caller_drives = false;
    if (variant == 1) c.cycle_time_ms = 0.2;
    if (variant == 2) c.autotune = true;
    st = blocking_callers(c, 2, 2, 30);
    EXPECT_EQ(st.tensors, 2 * 2 * 30);
    EXPECT_EQ(st.caller_cycles, 0) << "variant " << variant;
  }
}

// Async calls are left to the loop thread (the caller may be computing meanwhile); only a
// wait() on an unfinished handle may drive.
TEST(Cycle, AsyncCallsAreRunByTheLoopUntilTheCallerWaits) {
  Config cfg = test::fast_config();
  cfg.cycle_time_ms = 0;
  std::atomic<int> wrong{0};
  Status s = run_local(2, cfg, [&](Runtime& rt) {
    std::vector<float> v(8, 1.0f);
    Tensor t{v.data(), DataType::kFloat32, {8}};
    for (int i = 0; i < 20; ++i) {
      Handle h = rt.allreduce_async("a", t, t, ReduceOp::kSum);
      while (!h->poll()) std::this_thread::yield();  // never waits: the loop must finish it
      if (!h->wait().ok()) ++wrong;
    }
    if (rt.stats().caller_cycles != 0) ++wrong;
    if (v[0] != 1048576.0f) ++wrong;  // doubled 20 times
  });
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace hvd

#include "core/response_cache.h"

namespace hvd {
namespace {

// A fused response of k tensors splits into k single-tensor responses, each holding only its
// own name and count (the split once kept k slots of capacity in each: memory k^2).
TEST(ResponseCache, SplitResponsesHoldOneTensorEach) {
  Response fused;
  fused.op = OpType::kAllreduce;
  fused.dtype = DataType::kFloat32;
  constexpr int k = 2000;
  for (int i = 0; i < k; ++i) {
    fused.names.push_back("grad." + std::to_string(i));
    fused.counts.push_back(i + 1);
  }
  const std::vector<Response> split = split_response(fused);
  ASSERT_EQ(split.size(), static_cast<size_t>(k));
  size_t capacity = 0;
  for (int i = 0; i < k; ++i) {
    const Response& s = split[static_cast<size_t>(i)];
    ASSERT_EQ(s.names, std::vector<std::string>{"grad." + std::to_string(i)});
    ASSERT_EQ(s.counts, std::vector<int64_t>{i + 1});
    EXPECT_EQ(s.op, OpType::kAllreduce);
    EXPECT_EQ(s.dtype, DataType::kFloat32);
    capacity += s.names.capacity() + s.counts.capacity();
  }
  EXPECT_LE(capacity, static_cast<size_t>(4 * k));
}

}  // namespace
}  // namespace hvd
