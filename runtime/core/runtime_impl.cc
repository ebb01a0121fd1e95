// RuntimeImpl: start-up agreement, shutdown, and what one background cycle does (the loop
// that runs the cycles is the Scheduler's, the enqueue funnel is in enqueue.cc).
#include "core/runtime_impl.h"

#include <mutex>
#include <sstream>

#include "core/executor.h"

namespace hvd {

namespace {

LogLevel level_of(const Config& c) {
  LogLevel l = LogLevel::kWarning;
  parse_log_level(c.log_level, &l);
  return l;
}

}  // namespace

RuntimeImpl::RuntimeImpl(RuntimeOptions opts)
    : opts_(std::move(opts)),
      start_config_(opts_.config),
      log_(opts_.log, level_of(opts_.config), opts_.transport ? opts_.transport->rank() : -1) {}

RuntimeImpl::~RuntimeImpl() {
  if (running_) (void)shutdown();
}

// Rank 0 checks that every rank runs with the same knobs and hands out the time origin
// (what this returns).
static StatusOr<double> agree_on_start(Transport& t, Platform& p, const Logger& log,
                                       const Config& cfg) {
  ControlPlane cp(t, p, log, cfg.stall_check_time_s, cfg.stall_shutdown_time_s);
  std::ostringstream mine;
  for (const auto& [k, v] : cfg.describe())
    if (k != "timeline" && k != "log_level" && k != "autotune_log") mine << k << '=' << v << ';';
  const std::string m = mine.str();
  HVD_ASSIGN_OR_RETURN(const Gathered all, cp.gather(std::vector<uint8_t>(m.begin(), m.end())));
  Writer w;
  if (t.rank() == 0) {
    std::string err;
    for (int r = 1; r < all.ranks() && err.empty(); ++r) {
      std::string other(all.data(r), all.data(r) + all.length(r));
      if (other != m) err = "Mismatched knobs: rank 0 runs with {" + m + "} but rank " +
                            std::to_string(r) + " with {" + other + "}";
    }
    w.str(err);
    w.f64(p.now());
  }
  std::vector<uint8_t> plan = std::move(w.bytes());
  HVD_RETURN_IF_ERROR(cp.bcast(&plan));
  Reader rd(plan.data(), plan.size());
  std::string err = rd.str();
  const double origin = rd.f64();
  if (!err.empty()) return Status::Mismatch(err);
  return origin;
}

Status RuntimeImpl::start() {
  if (running_) return Status::Precondition("runtime already started");
  if (!opts_.platform || !opts_.transport || !opts_.cpu)
    return Status::InvalidArgument("runtime needs a platform, a transport and a cpu device");
  opts_.config = start_config_;  // a restart forgets what autotune chose
  HVD_RETURN_IF_ERROR(opts_.config.validate());
  HVD_ASSIGN_OR_RETURN(algorithms_, opts_.config.algorithms());
  if (scheduler_) stats_.caller_cycles += scheduler_->caller_cycles_locked();  // a restart
  signal_ = std::make_shared<CompletionSignal>();
  signal_->mu = opts_.platform->make_mutex();
  signal_->cv = opts_.platform->make_condvar();
  queue_mu_ = opts_.platform->make_mutex();
  if (!hook_mu_) hook_mu_ = opts_.platform->make_mutex();
  scheduler_ = std::make_unique<Scheduler>(
      *opts_.platform, opts_.config, *queue_mu_,
      Scheduler::Work{[this] { return has_work_locked(); },
                      [this](double started) { return cycle_body(started); }});
  sets_ = std::make_unique<ProcessSets>(*opts_.platform, opts_.config, log_, opts_.cpu, opts_.gpu,
                                        *queue_mu_);
  tuned_ = AutotuneState{};  // start_autotune() fills it once the world set exists
  stopped_ = false;
  failure_ = Status::OK();
  // A real GPU keeps per-thread state (the current CUDA device), so only the loop drives it.
  const bool caller_may_drive = opts_.config.caller_drives && !opts_.config.autotune &&
                                (!opts_.gpu || opts_.gpu->allows_phantom());
  Transport& t = *opts_.transport;
  HVD_ASSIGN_OR_RETURN(const double origin, agree_on_start(t, *opts_.platform, log_, opts_.config));
  if (opts_.time_origin == 0) opts_.time_origin = origin;
  live_timeline_.reset();
  live_mark_cycles_ = opts_.config.timeline_mark_cycles;
  if (!opts_.timeline && !opts_.config.timeline.empty()) {
    HVD_ASSIGN_OR_RETURN(std::unique_ptr<TimelineWriter> own,
                         TimelineWriter::open(timeline_rank_path(opts_.config.timeline, t.rank())));
    live_timeline_ = std::move(own);
  }
  snapshot_timeline_locked();  // no other thread runs yet
  if (timeline_) timeline_->declare_rank(t.rank(), "rank " + std::to_string(t.rank()));
  HVD_RETURN_IF_ERROR(sets_->add_world(t));
  if (t.rank() == 0 && log_.enabled(LogLevel::kInfo)) {
    std::ostringstream os;
    os << "hvd runtime on " << t.name() << ": size=" << t.size() << " nodes=" << t.cross_size()
       << "; knobs:";
    for (const auto& [k, v] : opts_.config.describe()) os << ' ' << k << '=' << v;
    log_.log(LogLevel::kInfo, os.str());
  }
  start_autotune();
  running_ = true;
  {
    std::unique_lock<Mutex> lk(*signal_->mu);
    signal_->driver = scheduler_.get();
  }
  scheduler_->start("hvd-loop-" + std::to_string(t.rank()), caller_may_drive);
  return Status::OK();
}

Status RuntimeImpl::shutdown() {
  if (!running_) return Status::OK();
  scheduler_->stop();
  {
    std::unique_lock<Mutex> lk(*signal_->mu);
    signal_->driver = nullptr;
  }
  running_ = false;
  if (timeline_) timeline_->flush();
  std::unique_lock<Mutex> lk(*queue_mu_);
  if (live_timeline_) live_timeline_->flush();
  if (failure_.ok() || failure_.code() == StatusCode::kAborted) return Status::OK();
  return failure_;
}

bool RuntimeImpl::has_work_locked() const {
  for (const auto& [id, ps] : sets_->members())
    if (!ps->incoming.empty() || !ps->table.empty()) return true;
  return false;
}

// One cycle, on whichever thread the Scheduler runs it: every set this rank belongs to
// negotiates once and runs the agreed responses in order; then autotune and removed sets.
bool RuntimeImpl::cycle_body(double started) {
  Platform& p = *opts_.platform;
  const int me = opts_.transport->rank();
  std::vector<ProcessSet*>& sets = cycle_sets_;  // kept from cycle to cycle: no allocation
  sets.clear();
  bool want_shutdown;
  int64_t bytes_before = 0;
  {
    std::unique_lock<Mutex> lk(*queue_mu_);
    snapshot_timeline_locked();
    for (auto& [id, ps] : sets_->members()) sets.push_back(ps.get());
    want_shutdown = scheduler_->shutdown_requested_locked();
    cycle_index_ = ++stats_.cycles;
    bytes_before = stats_.bytes_allreduced;
  }
  if (timeline_ && mark_cycles_) timeline_->instant(me, kLaneCycle, "CYCLE_START", "cycle", ts_us(started));
  bool stop = false;
  std::optional<Tunables> tunables;
  for (ProcessSet* ps : sets) {
    {  // what became ready by now is submitted before the take
      if (hook_set_.load(std::memory_order_acquire)) {  // no lock per cycle when there is no hook
        std::unique_lock<Mutex> lk(*hook_mu_);
        if (cycle_hook_) cycle_hook_(p.shared_now());
      }
    }
    // References to the table's entries: only the thread running cycles (this one) takes
    // entries out of the table, so they outlive the negotiation.
    std::vector<RequestRef>& incoming = cycle_incoming_;
    incoming.clear();
    {
      std::unique_lock<Mutex> lk(*queue_mu_);
      snapshot_timeline_locked();  // what start_timeline() set before these were submitted
      incoming.reserve(ps->incoming.size());
      for (auto* e : ps->incoming) {
        incoming.push_back(RequestRef{&e->first, &e->second.req, ps->t->rank()});
        e->second.announced = true;
      }
      ps->incoming.clear();
    }
    // The first set's negotiation starts as the cycle does, unless a hook ran in between
    // (one clock read fewer).
    const double t0 = ps == sets.front() && !hook_set_.load(std::memory_order_relaxed) ? started : p.now();
    StatusOr<NegotiationResult> negotiated = ps->controller->negotiate(incoming, ps->id == 0 && want_shutdown, t0);
    // Kept for the next cycle unless large (24 bytes a tensor: not held after a big cycle).
    if (incoming.capacity() > 4096) std::vector<RequestRef>().swap(incoming);
    const double t1 = p.now();
    {
      std::unique_lock<Mutex> lk(*queue_mu_);
      stats_.negotiation_s += t1 - t0;
      if (negotiated.ok()) {
        stats_.cache_hits += negotiated->cache_hits;
        stats_.cache_misses += negotiated->cache_misses;
        stats_.eager_tensors += negotiated->eager_tensors;
      }
    }
    if (!negotiated.ok()) {
      HVD_LOG(log_, kError, "negotiation failed: " << negotiated.status().message());
      fail_all(negotiated.status());
      return false;
    }
    const NegotiationResult& res = *negotiated;
    for (size_t i = 0; i < res.responses.size(); ++i) {
      const Response& r = res.responses[i];
      const uint8_t* reduced =
          i < res.eager_at.size() && res.eager_at[i] >= 0 ? res.eager + res.eager_at[i] : nullptr;
      Status s = perform(*ps, r, reduced, i == 0 ? t1 : -1);
      if (!s.ok()) {
        HVD_LOG(log_, kError, optype_name(r.op) << " failed: " << s.message());
        fail_all(s);
        return false;
      }
    }
    stop = stop || (ps->id == 0 && res.shutdown);
    if (ps->id == 0) tunables = res.tunables;
  }
  if (opts_.config.autotune && !stop) {
    int64_t bytes;
    {
      std::unique_lock<Mutex> lk(*queue_mu_);
      bytes = stats_.bytes_allreduced - bytes_before;
    }
    autotune_end_of_cycle(tunables, bytes);
  }
  drop_removed_sets();
  if (timeline_ && !opts_.timeline) timeline_->flush();
  if (stop) {
    fail_all(Status::Aborted("the hvd runtime was shut down (a rank called shutdown) while "
                             "this operation was pending"));
    return false;
  }
  return true;
}

void RuntimeImpl::snapshot_timeline_locked() {
  if (opts_.timeline) {
    timeline_ = opts_.timeline;
    mark_cycles_ = opts_.config.timeline_mark_cycles;
    return;
  }
  cycle_timeline_ = live_timeline_;
  timeline_ = cycle_timeline_.get();
  mark_cycles_ = live_mark_cycles_;
}

Status RuntimeImpl::start_timeline(const std::string& path, bool mark_cycles) {
  if (!running_) return Status::Precondition("start_timeline: the hvd runtime is not running");
  if (opts_.timeline)
    return Status::Precondition("start_timeline: this world's ranks share one timeline writer");
  if (path.empty()) return Status::InvalidArgument("start_timeline: the file path is empty");
  const int me = opts_.transport->rank();
  HVD_ASSIGN_OR_RETURN(std::unique_ptr<TimelineWriter> opened, TimelineWriter::open(timeline_rank_path(path, me)));
  std::shared_ptr<TimelineWriter> writer = std::move(opened);
  writer->declare_rank(me, "rank " + std::to_string(me));
  std::shared_ptr<TimelineWriter> old;
  {
    std::unique_lock<Mutex> lk(*queue_mu_);
    old = std::move(live_timeline_);
    live_timeline_ = std::move(writer);
    live_mark_cycles_ = mark_cycles;
  }
  if (old) old->flush();
  return Status::OK();
}

Status RuntimeImpl::stop_timeline() {
  if (!running_) return Status::Precondition("stop_timeline: the hvd runtime is not running");
  if (opts_.timeline)
    return Status::Precondition("stop_timeline: this world's ranks share one timeline writer");
  std::shared_ptr<TimelineWriter> old;
  {
    std::unique_lock<Mutex> lk(*queue_mu_);
    old = std::move(live_timeline_);
  }
  // Operations that finished wrote their events before completing: they are in `old`.
  if (old) old->flush();
  return Status::OK();
}

void RuntimeImpl::fail_all(const Status& s) {
  std::vector<std::shared_ptr<HandleImpl>> handles;
  {
    std::unique_lock<Mutex> lk(*queue_mu_);
    stopped_ = true;
    if (failure_.ok()) failure_ = s;
    for (auto& [id, ps] : sets_->members()) {
      for (auto& [name, e] : ps->table) handles.push_back(e.handle);
      ps->table.clear();
      ps->incoming.clear();
    }
  }
  for (auto& h : handles) h->complete(s);
}

void RuntimeImpl::set_cycle_hook(std::function<void(double)> hook) {
  hook_set_.store(static_cast<bool>(hook), std::memory_order_release);
  if (!hook_mu_) {
    cycle_hook_ = std::move(hook);
    return;
  }
  std::unique_lock<Mutex> lk(*hook_mu_);
  cycle_hook_ = std::move(hook);
}

RuntimeStats RuntimeImpl::stats() const {
  if (!queue_mu_) return stats_;
  std::unique_lock<Mutex> lk(*queue_mu_);
  RuntimeStats st = stats_;
  st.caller_cycles += scheduler_->caller_cycles_locked();
  return st;
}

Status RuntimeImpl::perform(ProcessSet& ps, const Response& r, const void* reduced, double now) {
  const ExecutorEnv env{*opts_.platform,
                        opts_.config,
                        algorithms_,
                        opts_.cpu,
                        opts_.gpu,
                        *queue_mu_,
                        stats_,
                        timeline_,
                        opts_.transport->rank(),
                        opts_.time_origin,
                        cycle_index_,
                        *sets_};
  return Executor(env, ps, r, reduced).run(now);
}

// Sets removed by this cycle's REMOVE_PROCESS_SET responses leave after the cycle walked
// every set; what was still pending in them fails.
void RuntimeImpl::drop_removed_sets() {
  std::vector<std::shared_ptr<HandleImpl>> handles;
  std::vector<std::unique_ptr<ProcessSet>> gone;
  {
    std::unique_lock<Mutex> lk(*queue_mu_);
    gone = sets_->take_removed_locked();
    for (auto& ps : gone)
      for (auto& [name, e] : ps->table) handles.push_back(e.handle);
  }
  for (auto& h : handles)
    h->complete(Status::Aborted("process set was removed while this operation was pending"));
}

}  // namespace hvd
