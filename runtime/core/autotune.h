// Horovod-style autotuning (internal). Rank 0 scores the knobs it runs with (bytes
// allreduced per second of Platform time over `steps_per_sample` cycles that did work),
// searches fusion threshold and cycle time with Bayesian optimisation (a Gaussian process
// with expected improvement), then tries the on/off knobs one at a time, and freezes the
// best setting. The choice travels to the other ranks in the coordinator's plan
// (Controller) and is applied by every rank at the end of the same cycle (RuntimeImpl).
//
// Search space (Horovod's ranges, searched in log space so small values get resolution):
//   fusion threshold: 0 .. 64 MiB, x0 = log2(1 + MiB) / log2(65), rounded to 64 KiB
//   cycle time:       1 .. 100 ms, x1 = log10(ms) / 2, rounded to 0.01 ms
// Everything is deterministic (seeded RNG, no clock reads of its own): the simulator gives
// the same choice bit for bit on every run.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/message.h"

namespace hvd {

/// The knobs the autotuner moves; every rank runs with the same values in the same cycle.
struct Tunables {
  int64_t fusion_threshold = 0;         ///< bytes
  double cycle_time_ms = 0;             ///< background loop period
  bool cache_enabled = true;            ///< response-cache bit-vector path on
  bool hierarchical_allreduce = false;  ///< node/cross-node allreduce
  bool hierarchical_allgather = false;  ///< node/cross-node allgather
  bool final = false;                   ///< the autotuner has frozen this setting

  bool operator==(const Tunables&) const = default;
};

/// Encodes / decodes tunables inside a control message.
void write_tunables(Writer& w, const Tunables& t);
Tunables read_tunables(Reader& r);

/// Deterministic 64-bit RNG (SplitMix64): same seed, same stream on every platform.
class SeededRng {
 public:
  explicit SeededRng(uint64_t seed) : state_(seed) {}
  /// Next raw 64 bits.
  uint64_t next();
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

/// Gaussian-process regression over inputs in [0,1]^d with an RBF kernel, unit signal
/// variance, `noise`^2 added to the diagonal (for scores standardised to mean 0, sd 1), and
/// the length scale picked from a small grid by the log marginal likelihood.
class GaussianProcess {
 public:
  explicit GaussianProcess(double noise) : noise_(noise) {}
  /// Fits the samples; `y` is standardised internally.
  void fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y);
  /// Posterior mean and standard deviation at `x`, in the units of the fitted y.
  void predict(const std::vector<double>& x, double* mean, double* sd) const;
  /// The length scale chosen by the last fit.

 private:
  double kernel(const std::vector<double>& a, const std::vector<double>& b) const;
  bool factor(double length, double* log_likelihood);

  double noise_;
  double length_ = 0.3;
  double y_mean_ = 0, y_sd_ = 1;
  std::vector<std::vector<double>> x_;
  std::vector<double> z_;      // standardised y
  std::vector<double> chol_;   // lower Cholesky factor of K + noise I (row major)
  std::vector<double> alpha_;  // (K + noise I)^-1 z
};

/// Expected improvement over `best` of a maximised objective with posterior (mean, sd).
double expected_improvement(double mean, double sd, double best, double xi);

/// Bayesian optimisation of a maximised objective over [0,1]^dims.
class BayesianOptimizer {
 public:
  BayesianOptimizer(int dims, double noise, uint64_t seed) : dims_(dims), gp_(noise), rng_(seed) {}
  /// Adds one scored point.
  void add_sample(const std::vector<double>& x, double y);
  /// The point that maximises expected improvement (random candidates, then a local
  /// pattern search from the best few); a random point while fewer than dims + 1 exist.
  std::vector<double> next_sample();
  /// Number of samples.
  size_t size() const { return y_.size(); }

 private:
  double ei_at(const std::vector<double>& x, double best) const;

  int dims_;
  GaussianProcess gp_;
  SeededRng rng_;
  std::vector<std::vector<double>> x_;
  std::vector<double> y_;
  double xi_ = 0;
};

/// What the parameter manager needs to know.
struct AutotuneOptions {
  int warmup_samples = 3;      ///< samples scored and discarded at start
  int steps_per_sample = 10;   ///< cycles with allreduce work per sample
  int bayes_max_samples = 20;  ///< Bayesian samples of (fusion, cycle), initial included
  double noise = 0.8;          ///< Gaussian-process noise
  bool tune_cache = true;      ///< try the response cache on/off
  bool tune_hierarchical_allreduce = false;  ///< try hierarchical allreduce on/off
  bool tune_hierarchical_allgather = false;  ///< try hierarchical allgather on/off
  std::string log_path;                      ///< CSV of every sample ("" = none)
  uint64_t seed = 0x5eed;                    ///< RNG seed
};

/// Horovod's ParameterManager: samples, scores and finally freezes the tunables.
class ParameterManager {
 public:
  ParameterManager(const AutotuneOptions& opts, const Tunables& initial);
  ~ParameterManager();
  /// Starts scoring the current setting (call when it took effect everywhere).
  void start_sample(double now);
  /// Records one finished cycle. Returns true when the sample is complete and a new
  /// setting (possibly the same, `final` once frozen) is in next().
  bool record_cycle(int64_t bytes, double now);
  /// The setting to announce after record_cycle returned true.
  const Tunables& next() const { return next_; }
  /// The setting being scored.
  const Tunables& current() const { return current_; }
  /// True once the final setting was chosen.
  bool done() const { return done_; }
  /// Samples scored (warm-up included).
  int samples() const { return samples_; }
  /// Best score so far (bytes/s).
  double best_score() const { return best_score_; }

  /// Maps a point of [0,1]^2 to (fusion bytes, cycle ms) and back.
  static void to_knobs(const std::vector<double>& x, int64_t* fusion, double* cycle_ms);
  static std::vector<double> to_unit(int64_t fusion, double cycle_ms);

 private:
  enum class Phase { kWarmup, kBayes, kCategorical, kDone };
  void finish_sample(double score);
  void next_categorical();
  void log_row(const char* phase, const Tunables& t, double score);

  AutotuneOptions opts_;
  Phase phase_ = Phase::kWarmup;
  BayesianOptimizer bayes_;
  Tunables current_, next_, best_;
  std::vector<double> current_x_;
  double best_score_ = -1;
  int samples_ = 0;
  int bayes_samples_ = 0;
  size_t categorical_ = 0;  // index into the on/off knobs tried so far
  bool done_ = false;
  double sample_start_ = 0;
  int64_t sample_bytes_ = 0;
  int sample_steps_ = 0;
  std::unique_ptr<std::ofstream> log_;
};

}  // namespace hvd
