// Autotune: the Gaussian process, expected improvement, the Bayesian optimiser, the
// parameter manager's schedule and CSV log, and autotuning inside multi-rank runs.
#include "core/autotune.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <numbers>
#include <sstream>

#include "hvd/local.h"
#include "test_util.h"

namespace hvd {
namespace {

TEST(GaussianProcess, FitsASmoothFunctionAndIsUnsureFarFromSamples) {
  auto f = [](double x) { return std::sin(2 * std::numbers::pi * x); };
  std::vector<std::vector<double>> xs;
  std::vector<double> ys;
  for (int i = 0; i <= 8; ++i) {
    const double x = 0.5 * i / 8.0;  // samples only on [0, 0.5]
    xs.push_back({x});
    ys.push_back(f(x));
  }
  GaussianProcess gp(1e-6);
  gp.fit(xs, ys);
  double sd_near = 0;
  for (double x : {0.03, 0.11, 0.27, 0.4, 0.47}) {
    double m, sd;
    gp.predict({x}, &m, &sd);
    EXPECT_NEAR(m, f(x), 0.03) << "x=" << x;
    sd_near = std::max(sd_near, sd);
  }
  EXPECT_LT(sd_near, 0.01);
  double m_far, sd_far;
  gp.predict({0.95}, &m_far, &sd_far);
  EXPECT_GT(sd_far, 5 * sd_near);  // no data there: the posterior stays wide
  // With noise the fit smooths instead of interpolating.
  GaussianProcess noisy(0.8);
  noisy.fit(xs, ys);
  double m_noisy, sd_noisy;
  noisy.predict({0.25}, &m_noisy, &sd_noisy);
  EXPECT_GT(sd_noisy, 0.1);
}

TEST(ExpectedImprovement, GrowsWithMeanAndUncertainty) {
  EXPECT_DOUBLE_EQ(expected_improvement(1.0, 0.0, 2.0, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(expected_improvement(3.0, 0.0, 2.0, 0.0), 1.0);
  EXPECT_GT(expected_improvement(2.5, 0.1, 2.0, 0.0), expected_improvement(2.1, 0.1, 2.0, 0.0));
  EXPECT_GT(expected_improvement(1.0, 2.0, 2.0, 0.0), expected_improvement(1.0, 0.5, 2.0, 0.0));
  EXPECT_GT(expected_improvement(1.0, 0.5, 2.0, 0.0), 0.0);
}

// Runs `n` rounds of Bayesian optimisation of f on [0,1]^2; returns every sampled point.
std::vector<std::vector<double>> optimise(const std::function<double(double, double)>& f, int n,
                                          uint64_t seed) {
  BayesianOptimizer bo(2, 0.01, seed);
  std::vector<std::vector<double>> xs;
  for (int i = 0; i < n; ++i) {
    std::vector<double> x = bo.next_sample();
    bo.add_sample(x, f(x[0], x[1]));
    xs.push_back(x);
  }
  return xs;
}

TEST(BayesianOptimizer, FindsTheOptimumOfA2DFunctionWithinTwentySamples) {
  auto f = [](double x, double y) { return -((x - 0.3) * (x - 0.3) + 2 * (y - 0.7) * (y - 0.7)); };
  auto xs = optimise(f, 20, 42);
  double best = -1e9;
  std::vector<double> at;
  for (const auto& x : xs)
    if (f(x[0], x[1]) > best) best = f(x[0], x[1]), at = x;
  EXPECT_NEAR(at[0], 0.3, 0.05);
  EXPECT_NEAR(at[1], 0.7, 0.05);
  // Deterministic: the same seed gives the same points, bit for bit.
  EXPECT_EQ(optimise(f, 20, 42), xs);
  EXPECT_NE(optimise(f, 20, 43), xs);
}

TEST(BayesianOptimizer, FindsTheOptimumOfA1DFunction) {
  auto f = [](double x) { return std::exp(-40 * (x - 0.62) * (x - 0.62)); };
  BayesianOptimizer bo(1, 0.01, 7);
  double best = -1, at = -1;
  for (int i = 0; i < 12; ++i) {
    auto x = bo.next_sample();
    const double y = f(x[0]);
    bo.add_sample(x, y);
    if (y > best) best = y, at = x[0];
  }
  EXPECT_NEAR(at, 0.62, 0.03);
}

TEST(ParameterManager, MapsKnobsToTheUnitSquareAndBack) {
  int64_t fusion;
  double cycle;
  ParameterManager::to_knobs({0.0, 0.0}, &fusion, &cycle);
  EXPECT_EQ(fusion, 0);
  EXPECT_DOUBLE_EQ(cycle, 1.0);
  ParameterManager::to_knobs({1.0, 1.0}, &fusion, &cycle);
  EXPECT_EQ(fusion, 64 << 20);
  EXPECT_DOUBLE_EQ(cycle, 100.0);
  auto u = ParameterManager::to_unit(16 << 20, 10.0);
  ParameterManager::to_knobs(u, &fusion, &cycle);
  EXPECT_EQ(fusion, 16 << 20);
  EXPECT_DOUBLE_EQ(cycle, 10.0);
}

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, ',')) cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}

// A synthetic job: bytes per second peak at 8 MiB fusion and 4 ms cycles; the cache adds
// 10 %. Each cycle with work moves `rate` bytes in one second.
double synthetic_rate(const Tunables& t) {
  const double f =
      std::log2(1 + static_cast<double>(t.fusion_threshold) / (1 << 20)) - std::log2(9.0);
  const double c = std::log10(t.cycle_time_ms) - std::log10(4.0);
  return 1e9 * std::exp(-0.5 * f * f - 2 * c * c) * (t.cache_enabled ? 1.1 : 1.0);
}

TEST(ParameterManager, DiscardsWarmupSamplesLogsEverySampleAndEndsOnTheBest) {
  const std::string csv = (std::filesystem::temp_directory_path() / "hvd_autotune_pm.csv").string();
  AutotuneOptions o;
  o.warmup_samples = 2;
  o.steps_per_sample = 3;
  o.bayes_max_samples = 8;
  o.tune_cache = true;
  o.log_path = csv;
  Tunables initial;
  initial.fusion_threshold = 128 << 20;
  initial.cycle_time_ms = 1;
  initial.cache_enabled = false;
  ParameterManager pm(o, initial);
  double now = 0;
  pm.start_sample(now);
  int changes = 0, cycles = 0;
  while (!pm.done() && cycles < 1000) {
    ++cycles;
    // Warm-up samples score absurdly high: if they were kept, they would win.
    const bool warm = pm.samples() < o.warmup_samples;
    const double rate = warm ? 1e15 : synthetic_rate(pm.current());
    now += 1;
    if (cycles % 2 == 0) {  // an idle cycle: counts time, not a step
      ASSERT_FALSE(pm.record_cycle(0, now));
      continue;
    }
    if (pm.record_cycle(static_cast<int64_t>(rate), now)) {
      ++changes;
      now += 1;  // the announcement cycle
      pm.start_sample(now);
    }
  }
  ASSERT_TRUE(pm.done());
  EXPECT_EQ(pm.samples(), 2 + 8 + 1);  // warm-up, Bayesian, cache flip
  EXPECT_EQ(changes, pm.samples());
  EXPECT_TRUE(pm.next().final);
  EXPECT_LT(pm.best_score(), 1e12);      // the warm-up scores were discarded
  EXPECT_TRUE(pm.next().cache_enabled);  // the flip scored better
  // The chosen knobs are near the synthetic optimum (8 MiB, 4 ms).
  EXPECT_GT(synthetic_rate(pm.next()), 0.8 * 1.1e9);

  auto rows = read_csv(csv);
  ASSERT_EQ(rows.size(), 1u + 11u + 1u);  // header, one per sample, the final choice
  EXPECT_EQ(rows[0][0], "sample");
  EXPECT_EQ(rows[1][1], "warmup");
  EXPECT_EQ(rows[2][1], "warmup");
  for (int i = 3; i <= 10; ++i) EXPECT_EQ(rows[static_cast<size_t>(i)][1], "bayes");
  EXPECT_EQ(rows[11][1], "categorical");
  EXPECT_EQ(rows[12][0], "best");
  // The final row is the best-scoring sampled setting (warm-up excluded).
  double best = -1;
  size_t best_row = 0;
  for (size_t i = 3; i <= 11; ++i) {
    const double s = std::stod(rows[i][7]);
    if (s > best) best = s, best_row = i;
  }
  for (size_t c = 2; c <= 7; ++c) EXPECT_EQ(rows[12][c], rows[best_row][c]) << "column " << c;
  EXPECT_EQ(std::stoll(rows[12][2]), pm.next().fusion_threshold);
  if (!std::getenv("HVD_KEEP_TEST_FILES")) std::filesystem::remove(csv);
}

// Many async allreduces per step until every rank sees the final setting; every result is
// checked, and all ranks must end on identical knobs having applied the same changes.
void autotuned_run(int size, int ranks_per_node) {
  const std::string csv =
      (std::filesystem::temp_directory_path() / ("hvd_autotune_np" + std::to_string(size) + ".csv"))
          .string();
  Config cfg = test::fast_config();
  cfg.autotune = true;
  cfg.autotune_log = csv;
  cfg.autotune_warmup_samples = 1;
  cfg.autotune_steps_per_sample = 2;
  cfg.autotune_bayes_opt_max_samples = 4;
  std::mutex mu;
  std::vector<AutotuneState> finals(static_cast<size_t>(size));
  std::vector<int> steps(static_cast<size_t>(size));
  std::atomic<int> bad{0};
  Status s = run_local(
      size, cfg,
      [&](Runtime& rt) {
        constexpr int kTensors = 24;
        int step = 0;
        for (; step < 400; ++step) {
          std::vector<std::vector<float>> bufs;
          for (int i = 0; i < kTensors; ++i)
            bufs.emplace_back(static_cast<size_t>(256 + 64 * i), static_cast<float>(rt.rank() + i));
          std::vector<Handle> hs;
          for (int i = 0; i < kTensors; ++i) {
            auto& b = bufs[static_cast<size_t>(i)];
            Tensor t{b.data(), DataType::kFloat32, {static_cast<int64_t>(b.size())}};
            hs.push_back(rt.allreduce_async(std::string("g").append(std::to_string(i)), t, t, ReduceOp::kSum));
          }
          int64_t last = -1;
          for (auto& h : hs) {
            ASSERT_TRUE(h->wait().ok());
            last = std::max(last, h->cycle());
          }
          for (int i = 0; i < kTensors; ++i) {
            const float want = static_cast<float>(size * (size - 1) / 2 + size * i);
            for (float v : bufs[static_cast<size_t>(i)])
              if (v != want) ++bad;
          }
          // Ranks agree on when to stop: the final setting took effect before this step's
          // last cycle (cycle numbers are the same on every rank).
          AutotuneState st = rt.autotune_state();
          if (st.done && st.done_cycle < last) break;
        }
        std::lock_guard<std::mutex> lk(mu);
        finals[static_cast<size_t>(rt.rank())] = rt.autotune_state();
        steps[static_cast<size_t>(rt.rank())] = step;
      },
      ranks_per_node);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(bad.load(), 0);
  const AutotuneState& a = finals[0];
  EXPECT_TRUE(a.enabled);
  EXPECT_TRUE(a.done);
  EXPECT_LT(steps[0], 400);
  EXPECT_EQ(a.samples, 1 + 4 + 1 + (ranks_per_node ? 2 : 0));  // + cache, + hierarchical
  EXPECT_GT(a.best_score, 0);
  for (int r = 1; r < size; ++r) {
    const AutotuneState& b = finals[static_cast<size_t>(r)];
    EXPECT_EQ(steps[static_cast<size_t>(r)], steps[0]) << "rank " << r;
    EXPECT_TRUE(b.done) << "rank " << r;
    EXPECT_EQ(b.done_cycle, a.done_cycle) << "rank " << r;
    EXPECT_EQ(b.changes, a.changes) << "rank " << r;
    EXPECT_EQ(b.fusion_threshold, a.fusion_threshold) << "rank " << r;
    EXPECT_EQ(b.cycle_time_ms, a.cycle_time_ms) << "rank " << r;
    EXPECT_EQ(b.cache_enabled, a.cache_enabled) << "rank " << r;
    EXPECT_EQ(b.hierarchical_allreduce, a.hierarchical_allreduce) << "rank " << r;
    EXPECT_EQ(b.hierarchical_allgather, a.hierarchical_allgather) << "rank " << r;
  }
  // Rank 0 wrote the log: header, every sample, the final choice matching the state.
  auto rows = read_csv(csv);
  ASSERT_EQ(rows.size(), static_cast<size_t>(1 + a.samples + 1));
  EXPECT_EQ(rows.back()[0], "best");
  EXPECT_EQ(std::stoll(rows.back()[2]), a.fusion_threshold);
  EXPECT_EQ(std::stod(rows.back()[3]), a.cycle_time_ms);
  EXPECT_EQ(rows.back()[4], a.cache_enabled ? "1" : "0");
  if (!std::getenv("HVD_KEEP_TEST_FILES")) std::filesystem::remove(csv);
}

TEST(AutotuneRun, TwoRanksEndOnTheSameKnobsWithCorrectResults) {
  autotuned_run(2, 0);
}

TEST(AutotuneRun, FourRanksOnTwoNodesAlsoTryHierarchical) {
  autotuned_run(4, 2);
}

TEST(AutotuneRun, OffByDefaultAndConfigKeepsTheStartKnobs) {
  Status s = run_local(2, test::fast_config(), [](Runtime& rt) {
    std::vector<float> b(64, 1.0f);
    Tensor t{b.data(), DataType::kFloat32, {64}};
    ASSERT_TRUE(rt.allreduce("x", t, t, ReduceOp::kSum).ok());
    AutotuneState st = rt.autotune_state();
    EXPECT_FALSE(st.enabled);
    EXPECT_EQ(st.changes, 0);
    EXPECT_EQ(st.fusion_threshold, rt.config().fusion_threshold);
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

TEST(AutotuneConfig, KnobsHaveHorovodNamesAndDefaults) {
  Config c;
  EXPECT_EQ(c.autotune_warmup_samples, 3);
  EXPECT_EQ(c.autotune_steps_per_sample, 10);
  EXPECT_EQ(c.autotune_bayes_opt_max_samples, 20);
  EXPECT_DOUBLE_EQ(c.autotune_gaussian_process_noise, 0.8);
  ASSERT_TRUE(c.set("HOROVOD_AUTOTUNE", "1").ok());
  ASSERT_TRUE(c.set("HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE", "4").ok());
  ASSERT_TRUE(c.set("HOROVOD_AUTOTUNE_GAUSSIAN_PROCESS_NOISE", "0.5").ok());
  EXPECT_TRUE(c.autotune);
  EXPECT_EQ(c.autotune_steps_per_sample, 4);
  EXPECT_DOUBLE_EQ(c.autotune_gaussian_process_noise, 0.5);
  EXPECT_FALSE(c.set("HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE", "0").ok());
  EXPECT_FALSE(c.set("HOROVOD_AUTOTUNE_GAUSSIAN_PROCESS_NOISE", "-1").ok());
}

}  // namespace
}  // namespace hvd
