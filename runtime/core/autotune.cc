#include "core/autotune.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace hvd {

void write_tunables(Writer& w, const Tunables& t) {
  w.i64(t.fusion_threshold);
  w.f64(t.cycle_time_ms);
  w.u8(static_cast<uint8_t>((t.cache_enabled ? 1 : 0) | (t.hierarchical_allreduce ? 2 : 0) |
                            (t.hierarchical_allgather ? 4 : 0) | (t.final ? 8 : 0)));
}

Tunables read_tunables(Reader& r) {
  Tunables t;
  t.fusion_threshold = r.i64();
  t.cycle_time_ms = r.f64();
  const uint8_t f = r.u8();
  t.cache_enabled = f & 1;
  t.hierarchical_allreduce = f & 2;
  t.hierarchical_allgather = f & 4;
  t.final = f & 8;
  return t;
}

uint64_t SeededRng::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// ---- Gaussian process --------------------------------------------------------------

double GaussianProcess::kernel(const std::vector<double>& a, const std::vector<double>& b) const {
  double d2 = 0;
  for (size_t i = 0; i < a.size(); ++i) d2 += (a[i] - b[i]) * (a[i] - b[i]);
  return std::exp(-d2 / (2 * length_ * length_));
}

// Cholesky factor of K + noise I for the current length scale, alpha = (K + noise I)^-1 z,
// and the log marginal likelihood of z. False if the matrix is not positive definite.
bool GaussianProcess::factor(double length, double* log_likelihood) {
  length_ = length;
  const size_t n = x_.size();
  chol_.assign(n * n, 0.0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j <= i; ++j) {
      double s = kernel(x_[i], x_[j]) + (i == j ? noise_ * noise_ : 0.0);
      for (size_t k = 0; k < j; ++k) s -= chol_[i * n + k] * chol_[j * n + k];
      if (i == j) {
        if (s <= 0) return false;
        chol_[i * n + i] = std::sqrt(s);
      } else {
        chol_[i * n + j] = s / chol_[j * n + j];
      }
    }
  }
  // Forward then backward substitution: L v = z, L^T alpha = v.
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) {
    double s = z_[i];
    for (size_t k = 0; k < i; ++k) s -= chol_[i * n + k] * v[k];
    v[i] = s / chol_[i * n + i];
  }
  alpha_.assign(n, 0.0);
  for (size_t i = n; i-- > 0;) {
    double s = v[i];
    for (size_t k = i + 1; k < n; ++k) s -= chol_[k * n + i] * alpha_[k];
    alpha_[i] = s / chol_[i * n + i];
  }
  double ll = 0;
  for (size_t i = 0; i < n; ++i) ll -= 0.5 * z_[i] * alpha_[i] + std::log(chol_[i * n + i]);
  *log_likelihood = ll - 0.5 * static_cast<double>(n) * std::log(2 * std::numbers::pi);
  return true;
}

void GaussianProcess::fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y) {
  x_ = x;
  const double n = static_cast<double>(y.size());
  y_mean_ = 0;
  for (double v : y) y_mean_ += v / n;
  double var = 0;
  for (double v : y) var += (v - y_mean_) * (v - y_mean_) / n;
  y_sd_ = var > 0 ? std::sqrt(var) : 1.0;
  z_.clear();
  for (double v : y) z_.push_back((v - y_mean_) / y_sd_);
  // Length scale: the most likely of a small grid (a deterministic stand-in for the
  // gradient-based hyper-parameter fit of Horovod's GP).
  static const double kLengths[] = {0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.8, 1.2};
  double best_ll = -std::numeric_limits<double>::infinity(), best_len = 0.3;
  for (double l : kLengths) {
    double ll;
    if (factor(l, &ll) && ll > best_ll) {
      best_ll = ll;
      best_len = l;
    }
  }
  double ll;
  factor(best_len, &ll);
}

void GaussianProcess::predict(const std::vector<double>& x, double* mean, double* sd) const {
  const size_t n = x_.size();
  if (n == 0) {
    *mean = 0;
    *sd = 1;
    return;
  }
  std::vector<double> ks(n), v(n);
  double m = 0;
  for (size_t i = 0; i < n; ++i) {
    ks[i] = kernel(x, x_[i]);
    m += ks[i] * alpha_[i];
  }
  double vv = 0;
  for (size_t i = 0; i < n; ++i) {
    double s = ks[i];
    for (size_t k = 0; k < i; ++k) s -= chol_[i * n + k] * v[k];
    v[i] = s / chol_[i * n + i];
    vv += v[i] * v[i];
  }
  *mean = y_mean_ + y_sd_ * m;
  *sd = y_sd_ * std::sqrt(std::max(1.0 - vv, 1e-12));
}

double expected_improvement(double mean, double sd, double best, double xi) {
  const double gain = mean - best - xi;
  if (sd <= 0) return std::max(gain, 0.0);
  const double z = gain / sd;
  const double cdf = 0.5 * std::erfc(-z / std::numbers::sqrt2);
  const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi);
  return gain * cdf + sd * pdf;
}

// ---- Bayesian optimisation ----------------------------------------------------------

void BayesianOptimizer::add_sample(const std::vector<double>& x, double y) {
  x_.push_back(x);
  y_.push_back(y);
}

double BayesianOptimizer::ei_at(const std::vector<double>& x, double best) const {
  double m, s;
  gp_.predict(x, &m, &s);
  return expected_improvement(m, s, best, xi_);
}

std::vector<double> BayesianOptimizer::next_sample() {
  std::vector<double> x(static_cast<size_t>(dims_));
  if (y_.size() < static_cast<size_t>(dims_) + 1) {  // too few to fit: explore at random
    for (double& v : x) v = rng_.uniform();
    return x;
  }
  gp_.fit(x_, y_);
  const double best = *std::max_element(y_.begin(), y_.end());
  // Exploration margin: a tenth of the scores' spread (Horovod's xi = 0.1 on normalised scores).
  double mean = 0, var = 0;
  for (double v : y_) mean += v / static_cast<double>(y_.size());
  for (double v : y_) var += (v - mean) * (v - mean) / static_cast<double>(y_.size());
  xi_ = 0.1 * std::sqrt(var);
  // Random candidates; keep the best few as starting points of a local search.
  constexpr int kCandidates = 1000, kStarts = 5;
  std::vector<std::pair<double, std::vector<double>>> top;
  for (int c = 0; c < kCandidates; ++c) {
    for (double& v : x) v = rng_.uniform();
    const double ei = ei_at(x, best);
    if (static_cast<int>(top.size()) < kStarts || ei > top.back().first) {
      top.emplace_back(ei, x);
      std::stable_sort(top.begin(), top.end(),
                       [](const auto& a, const auto& b) { return a.first > b.first; });
      if (static_cast<int>(top.size()) > kStarts) top.pop_back();
    }
  }
  // Pattern search: step along each axis while it helps, halve the step when nothing does.
  std::pair<double, std::vector<double>> winner = top.front();
  for (auto& [ei, p] : top) {
    for (double step = 0.05; step > 1e-3;) {
      bool moved = false;
      for (size_t d = 0; d < p.size(); ++d) {
        for (double dir : {-1.0, 1.0}) {
          std::vector<double> q = p;
          q[d] = std::clamp(q[d] + dir * step, 0.0, 1.0);
          const double e = ei_at(q, best);
          if (e > ei) {
            ei = e;
            p = q;
            moved = true;
          }
        }
      }
      if (!moved) step /= 2;
    }
    if (ei > winner.first) winner = {ei, p};
  }
  return winner.second;
}

// ---- Parameter manager --------------------------------------------------------------

namespace {
constexpr double kMaxFusionMiB = 64;
constexpr double kMinCycleMs = 1, kMaxCycleMs = 100;
constexpr int64_t kFusionQuantum = 64 << 10;
}  // namespace

void ParameterManager::to_knobs(const std::vector<double>& x, int64_t* fusion, double* cycle_ms) {
  const double mib = std::exp2(std::clamp(x[0], 0.0, 1.0) * std::log2(kMaxFusionMiB + 1)) - 1;
  *fusion = std::llround(mib * (1 << 20) / kFusionQuantum) * kFusionQuantum;
  const double ms = kMinCycleMs * std::pow(kMaxCycleMs / kMinCycleMs, std::clamp(x[1], 0.0, 1.0));
  *cycle_ms = std::round(ms * 100) / 100;
}

std::vector<double> ParameterManager::to_unit(int64_t fusion, double cycle_ms) {
  const double mib = std::clamp(static_cast<double>(fusion) / (1 << 20), 0.0, kMaxFusionMiB);
  const double ms = std::clamp(cycle_ms, kMinCycleMs, kMaxCycleMs);
  return {std::log2(1 + mib) / std::log2(kMaxFusionMiB + 1),
          std::log(ms / kMinCycleMs) / std::log(kMaxCycleMs / kMinCycleMs)};
}

ParameterManager::ParameterManager(const AutotuneOptions& opts, const Tunables& initial)
    : opts_(opts),
      bayes_(2, opts.noise, opts.seed),
      current_(initial),
      next_(initial),
      best_(initial) {
  current_.final = next_.final = best_.final = false;
  current_x_ = to_unit(initial.fusion_threshold, initial.cycle_time_ms);
  if (!opts_.log_path.empty()) {
    log_ = std::make_unique<std::ofstream>(opts_.log_path, std::ios::trunc);
    *log_ << "sample,phase,fusion_threshold_bytes,cycle_time_ms,cache_enabled,"
             "hierarchical_allreduce,hierarchical_allgather,score_bytes_per_s\n";
  }
  if (opts_.warmup_samples <= 0) {
    phase_ = Phase::kBayes;
    to_knobs(current_x_, &current_.fusion_threshold, &current_.cycle_time_ms);
    next_ = current_;
  }
}

ParameterManager::~ParameterManager() = default;

void ParameterManager::start_sample(double now) {
  sample_start_ = now;
  sample_bytes_ = 0;
  sample_steps_ = 0;
}

bool ParameterManager::record_cycle(int64_t bytes, double now) {
  if (done_) return false;
  sample_bytes_ += bytes;
  if (bytes > 0) ++sample_steps_;
  if (sample_steps_ < std::max(1, opts_.steps_per_sample)) return false;
  const double dt = now - sample_start_;
  finish_sample(dt > 0 ? static_cast<double>(sample_bytes_) / dt : 0.0);
  return true;
}

void ParameterManager::finish_sample(double score) {
  ++samples_;
  switch (phase_) {
    case Phase::kWarmup:
      log_row("warmup", current_, score);
      if (samples_ >= opts_.warmup_samples) {
        // The first Bayesian sample: the starting knobs, snapped into the search space.
        phase_ = Phase::kBayes;
        to_knobs(current_x_, &next_.fusion_threshold, &next_.cycle_time_ms);
      }
      break;
    case Phase::kBayes:
      log_row("bayes", current_, score);
      bayes_.add_sample(current_x_, score);
      ++bayes_samples_;
      if (score > best_score_) {
        best_score_ = score;
        best_ = current_;
      }
      if (bayes_samples_ >= std::max(1, opts_.bayes_max_samples)) {
        phase_ = Phase::kCategorical;
        next_categorical();
      } else {
        current_x_ = bayes_.next_sample();
        to_knobs(current_x_, &next_.fusion_threshold, &next_.cycle_time_ms);
      }
      break;
    case Phase::kCategorical:
      log_row("categorical", current_, score);
      if (score > best_score_) {
        best_score_ = score;
        best_ = current_;
      }
      next_categorical();
      break;
    case Phase::kDone:
      break;
  }
  current_ = next_;
}

// The on/off knobs, one at a time from the best setting so far: a flip is kept only if it
// scores better, so the frozen setting is the best-scoring sample.
void ParameterManager::next_categorical() {
  std::vector<bool Tunables::*> knobs;
  if (opts_.tune_cache) knobs.push_back(&Tunables::cache_enabled);
  if (opts_.tune_hierarchical_allreduce) knobs.push_back(&Tunables::hierarchical_allreduce);
  if (opts_.tune_hierarchical_allgather) knobs.push_back(&Tunables::hierarchical_allgather);
  if (categorical_ < knobs.size()) {
    next_ = best_;
    next_.*knobs[categorical_] = !(best_.*knobs[categorical_]);
    ++categorical_;
    return;
  }
  phase_ = Phase::kDone;
  done_ = true;
  next_ = best_;
  next_.final = true;
  log_row("final", next_, best_score_);
}

void ParameterManager::log_row(const char* phase, const Tunables& t, double score) {
  if (!log_) return;
  *log_ << (std::string(phase) == "final" ? std::string("best") : std::to_string(samples_)) << ','
        << phase << ',' << t.fusion_threshold << ',' << t.cycle_time_ms << ','
        << (t.cache_enabled ? 1 : 0) << ',' << (t.hierarchical_allreduce ? 1 : 0) << ','
        << (t.hierarchical_allgather ? 1 : 0) << ',' << static_cast<int64_t>(std::llround(score))
        << '\n';
  log_->flush();
}

}  // namespace hvd
