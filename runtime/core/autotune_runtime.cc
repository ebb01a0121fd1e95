// The autotuner inside the background loop. Rank 0 (the world's coordinator) scores each
// setting and picks the next one; the choice rides on the world plan of the next cycle
// (Controller::announce, which forces a full negotiation round) and every rank applies it
// at the end of that same cycle, after the cycle's responses ran. So within a cycle all
// ranks fuse with the same threshold (the response-cache fast path fuses locally), run
// the same algorithms and keep identical caches; no rank can disagree by construction.
#include <mutex>

#include "core/runtime_impl.h"

namespace hvd {

void RuntimeImpl::start_autotune() {
  const Config& c = opts_.config;
  AutotuneState st;
  st.enabled = c.autotune;
  st.fusion_threshold = c.fusion_threshold;
  st.cycle_time_ms = c.cycle_time_ms;
  st.cache_enabled = c.cache_capacity > 0;
  st.hierarchical_allreduce = c.hierarchical_allreduce;
  st.hierarchical_allgather = c.hierarchical_allgather;
  scheduler_->set_event_driven(c.cycle_time_ms == 0);
  tuner_.reset();
  awaiting_tunables_ = false;
  {
    std::unique_lock<Mutex> lk(*queue_mu_);
    tuned_ = st;
  }
  // Sets created mid-run follow the autotuner's cache switch.
  sets_->follow_cache_switch(st.enabled ? std::optional<bool>(st.cache_enabled) : std::nullopt);
  if (!c.autotune || opts_.transport->rank() != 0) return;
  AutotuneOptions o;
  o.warmup_samples = static_cast<int>(c.autotune_warmup_samples);
  o.steps_per_sample = static_cast<int>(c.autotune_steps_per_sample);
  o.bayes_max_samples = static_cast<int>(c.autotune_bayes_opt_max_samples);
  o.noise = c.autotune_gaussian_process_noise;
  o.log_path = c.autotune_log;
  o.tune_cache = c.cache_capacity > 0;
  // Hierarchical collectives need node and cross-node groups (several nodes, same size),
  // and the switch only matters while the algorithm is left to "auto".
  const ProcessSet& world = sets_->world();
  const bool multi_node = world.local && world.cross;
  o.tune_hierarchical_allreduce = multi_node && algorithms_.allreduce == AllreduceAlgorithm::kAuto;
  o.tune_hierarchical_allgather = multi_node && algorithms_.allgather == AllgatherAlgorithm::kAuto;
  Tunables t;
  t.fusion_threshold = st.fusion_threshold;
  t.cycle_time_ms = st.cycle_time_ms;
  t.cache_enabled = st.cache_enabled;
  t.hierarchical_allreduce = st.hierarchical_allreduce;
  t.hierarchical_allgather = st.hierarchical_allgather;
  tuner_ = std::make_unique<ParameterManager>(o, t);
  tuner_->start_sample(opts_.platform->now());
  HVD_LOG(log_, kInfo,
          "autotune: " << o.warmup_samples << " warm-up samples, " << o.bayes_max_samples
                       << " Bayesian samples of " << o.steps_per_sample << " steps");
}

// Called by every rank at the end of every cycle while autotune is on.
void RuntimeImpl::autotune_end_of_cycle(const std::optional<Tunables>& received, int64_t bytes) {
  const double now = opts_.platform->now();
  if (received) {
    apply_tunables(*received);
    if (tuner_) {
      awaiting_tunables_ = false;
      tuner_->start_sample(now);  // the new setting is scored from here on
    }
    return;
  }
  if (!tuner_ || awaiting_tunables_ || tuner_->done()) return;
  if (tuner_->record_cycle(bytes, now)) {
    sets_->world().controller->announce(tuner_->next());
    awaiting_tunables_ = true;
  }
}

void RuntimeImpl::apply_tunables(const Tunables& t) {
  Config& c = opts_.config;
  c.fusion_threshold = t.fusion_threshold;
  c.cycle_time_ms = t.cycle_time_ms;
  c.hierarchical_allreduce = t.hierarchical_allreduce;
  c.hierarchical_allgather = t.hierarchical_allgather;
  scheduler_->set_event_driven(t.cycle_time_ms == 0);
  sets_->set_cache_enabled(t.cache_enabled);
  std::unique_lock<Mutex> lk(*queue_mu_);
  AutotuneState& st = tuned_;
  st.fusion_threshold = t.fusion_threshold;
  st.cycle_time_ms = t.cycle_time_ms;
  st.cache_enabled = t.cache_enabled && c.cache_capacity > 0;
  st.hierarchical_allreduce = t.hierarchical_allreduce;
  st.hierarchical_allgather = t.hierarchical_allgather;
  ++st.changes;
  if (tuner_) {
    st.samples = tuner_->samples();
    st.best_score = tuner_->best_score();
  }
  if (t.final) {
    st.done = true;
    st.done_cycle = cycle_index_;
    HVD_LOG(log_, kInfo,
            "autotune: done after "
                << st.samples << " samples: fusion_threshold=" << t.fusion_threshold
                << " cycle_time_ms=" << t.cycle_time_ms << " cache=" << t.cache_enabled
                << " hierarchical_allreduce=" << t.hierarchical_allreduce
                << " hierarchical_allgather=" << t.hierarchical_allgather);
  }
}

AutotuneState RuntimeImpl::autotune_state() const {
  if (!queue_mu_) return AutotuneState{};
  std::unique_lock<Mutex> lk(*queue_mu_);
  return tuned_;
}

}  // namespace hvd
