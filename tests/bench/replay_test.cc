// Training-step replay on the in-process backend: timing split, overlap, ensemble mode,
// and hvdbench's cross-rank summary.
#include <gtest/gtest.h>

#include <mutex>

#include "hvd/local.h"
#include "hvd/replay/training_step.h"
#include "model_mode.h"

namespace hvd {
namespace {

// A 20 ms step (5 ms forward, 15 ms backward) with `n` gradients of `elements` floats,
// ready evenly through backward (the last one `tail_s` before backward ends).
workloads::StepPlan tiny_plan(int n, int64_t elements, double tail_s = 0.003) {
  workloads::StepPlan p;
  p.batch = 32;
  p.fwd_s = 0.005;
  p.bwd_s = 0.015;
  p.step_s = 0.020;
  for (int i = 0; i < n; ++i) {
    workloads::TensorReady t;
    t.index = static_cast<size_t>(i);
    t.name = "grad" + std::to_string(i);
    t.elements = elements;
    t.bytes = elements * 4;
    t.dtype = "float32";
    t.ready_s = (p.bwd_s - tail_s) * (i + 1) / n;
    p.tensors.push_back(t);
  }
  return p;
}

struct RankResults {
  std::mutex mu;
  std::vector<replay::ReplayResult> results;
  std::vector<RuntimeStats> before, after;
  bool ok = true;
};

void replay_on_ranks(int ranks, const workloads::StepPlan& plan, replay::ReplayOptions o, RankResults* run) {
  Config cfg;
  cfg.cycle_time_ms = 1;
  auto platform = make_std_platform();
  Status s = run_local(ranks, cfg, [&](Runtime& rt) {
    RuntimeStats before = rt.stats();
    replay::ReplayResult r;
    Status st = replay::replay_training(rt, *platform, plan, o, &r);
    std::lock_guard<std::mutex> lk(run->mu);
    run->ok = run->ok && st.ok();
    run->results.push_back(r);
    run->before.push_back(before);
    run->after.push_back(rt.stats());
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
  ASSERT_TRUE(run->ok);
  ASSERT_EQ(run->results.size(), static_cast<size_t>(ranks));
}

TEST(Replay, StepTimeIsComputeWhenCommunicationIsSmall) {
  replay::ReplayOptions o;
  o.warmup_steps = 1;
  o.steps = 4;
  RankResults run;
  replay_on_ranks(2, tiny_plan(8, 256), o, &run);
  for (const auto& r : run.results) {
    ASSERT_EQ(r.steps.size(), 4u);
    // Real clock on a possibly loaded machine: the emulated compute lasts at least the
    // plan's 20 ms (a sleep is never shorter); how much longer, and the exposed
    // communication, depend on the load, so no upper bound in time is asserted.
    EXPECT_GE(r.mean.compute_s, 0.020 * (1 - 1e-6));
    EXPECT_GE(r.mean.exposed_comm_s, 0.0);
    EXPECT_NEAR(r.mean.step_s, r.mean.compute_s + r.mean.exposed_comm_s, 1e-6);
    EXPECT_LE(r.mean.negotiation_s, r.mean.exposed_comm_s + 1e-9);
    EXPECT_EQ(r.allreduce_calls, 8);
    EXPECT_EQ(r.allreduce_bytes, 8 * 256 * 4);
    EXPECT_NEAR(r.samples_per_sec, 32 / r.mean.step_s, 1e-6);
  }
}

TEST(Replay, LargeGradientsReadyLateExposeCommunication) {
  replay::ReplayOptions o;
  o.warmup_steps = 1;
  o.steps = 2;
  RankResults run;
  // 2 x 32 MiB of gradients, all ready in the last 0.1 ms of backward: little to hide behind.
  replay_on_ranks(2, tiny_plan(2, 8 << 20, 0.0001), o, &run);
  for (const auto& r : run.results) {
    EXPECT_GT(r.mean.exposed_comm_s, 0.002);
    EXPECT_GT(r.mean.step_s, r.mean.compute_s + 0.002);
    EXPECT_GT(r.allreduce_time_s, 0.0);
  }
}

TEST(Replay, EnsembleExchangesNothingPerStep) {
  replay::ReplayOptions o;
  o.warmup_steps = 1;
  o.steps = 3;
  o.ensemble = true;
  RankResults run;
  replay_on_ranks(3, tiny_plan(8, 1024), o, &run);
  for (size_t k = 0; k < run.results.size(); ++k) {
    EXPECT_EQ(run.results[k].allreduce_calls, 0);
    EXPECT_EQ(run.after[k].bytes_allreduced - run.before[k].bytes_allreduced, 0);
    // Only the final broadcast of the ensemble's result.
    EXPECT_EQ(run.after[k].tensors - run.before[k].tensors, 1);
    EXPECT_LT(run.results[k].mean.exposed_comm_s, 0.002);
  }
}

TEST(Replay, ReportsEveryStepToTheCallback) {
  replay::ReplayOptions o;
  o.warmup_steps = 2;
  o.steps = 3;
  std::mutex mu;
  std::vector<int> seen;
  o.on_step = [&](int step, const replay::StepSample& s) {
    std::lock_guard<std::mutex> lk(mu);
    EXPECT_GT(s.step_s, 0);
    seen.push_back(step);
  };
  RankResults run;
  replay_on_ranks(1, tiny_plan(4, 64), o, &run);
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(Replay, RejectsZeroSteps) {
  replay::ReplayOptions o;
  o.steps = 0;
  Config cfg;
  auto platform = make_std_platform();
  Status s = run_local(1, cfg, [&](Runtime& rt) {
    replay::ReplayResult r;
    EXPECT_FALSE(replay::replay_training(rt, *platform, tiny_plan(1, 4), o, &r).ok());
  });
  EXPECT_TRUE(s.ok());
}

// A rank's own times (a slower GPU) replace the plan's: the names and sizes still come from
// the shared plan, the compute from the timing.
TEST(Replay, OwnTimingReplacesThePlansTimes) {
  const workloads::StepPlan plan = tiny_plan(4, 64);
  workloads::StepPlan slow = plan;  // twice as slow
  slow.fwd_s *= 2;
  slow.bwd_s *= 2;
  for (auto& t : slow.tensors) t.ready_s *= 2;
  const replay::StepTiming own = replay::timing_of(slow);
  ASSERT_EQ(own.ready_s.size(), plan.tensors.size());
  EXPECT_EQ(own.ready_s[3], slow.tensors[3].ready_s);
  replay::ReplayOptions o;
  o.warmup_steps = 0;
  o.steps = 1;
  o.timing = &own;
  RankResults run;
  replay_on_ranks(1, plan, o, &run);
  EXPECT_GE(run.results[0].mean.compute_s, 0.040 - 1e-3);  // 10 ms forward + 30 ms backward
  EXPECT_EQ(run.results[0].allreduce_calls, 4);
}

TEST(Replay, RejectsATimingForAnotherPlan) {
  replay::ReplayOptions o;
  const replay::StepTiming other = replay::timing_of(tiny_plan(3, 4));
  o.timing = &other;
  Config cfg;
  auto platform = make_std_platform();
  Status s = run_local(1, cfg, [&](Runtime& rt) {
    replay::ReplayResult r;
    Status st = replay::replay_training(rt, *platform, tiny_plan(4, 4), o, &r);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("3 tensor times for a plan of 4 tensors"), std::string::npos) << st.message();
  });
  EXPECT_TRUE(s.ok());
}

TEST(Summary, SlowestRankCountsAndEfficiencyUsesTheSingleRate) {
  bench::Options o;
  workloads::ModelTrace trace;
  trace.name = "tiny";
  trace.reference_gpu = "P100";
  const workloads::StepPlan plan = tiny_plan(2, 16);
  bench::WorldSamples w;
  w.samples = {{{0.10, 0.08, 0.02, 0.01}, {0.20, 0.08, 0.12, 0.05}},
               {{0.12, 0.08, 0.04, 0.02}, {0.10, 0.08, 0.02, 0.00}}};
  w.allreduce_time_s = {0.03, 0.05};
  replay::ReplayResult mine;
  mine.allreduce_calls = 2;
  mine.allreduce_bytes = 128;
  report::RunRecord r = bench::summarise_run(o, trace, plan, w, mine, 200.0);
  EXPECT_EQ(r.np, 2);
  EXPECT_NEAR(r.step_time_s, (0.12 + 0.20) / 2, 1e-12);
  EXPECT_NEAR(r.exposed_comm_s, (0.04 + 0.12) / 2, 1e-12);
  EXPECT_NEAR(r.images_per_sec, 2 * 32 / 0.16, 1e-9);
  EXPECT_NEAR(r.scaling_efficiency, r.images_per_sec / 400.0, 1e-12);
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_EQ(r.collectives[0].op, "allreduce");
  EXPECT_EQ(r.collectives[0].calls, 4);
  EXPECT_EQ(r.collectives[0].bytes, 256);
  EXPECT_NEAR(r.collectives[0].time_s, 0.10, 1e-12);
  EXPECT_NEAR(r.collectives[0].busbw_gbps, 256 / 0.10 / 1e9, 1e-15);
}

}  // namespace
}  // namespace hvd
