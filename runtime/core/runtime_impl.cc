// RuntimeImpl: start-up agreement, the enqueue funnel and the background loop.
#include "core/runtime_impl.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>
#include <sstream>

#include "core/executor.h"

namespace hvd {

namespace {

LogLevel level_of(const Config& c) {
  LogLevel l = LogLevel::kWarning;
  parse_log_level(c.log_level, &l);
  return l;
}

TensorRequest to_message(const OpRequest& q, int rank) {
  TensorRequest m;
  m.rank = rank;
  static_cast<OpSpec&>(m) =
      OpSpec{q.op, q.input.dtype, q.reduce_op, q.input.device, q.root, q.prescale, q.postscale};
  m.group_id = q.group_id;
  m.group_size = q.group_size;
  m.name = q.name;
  m.shape = q.input.shape;
  m.ranks.assign(q.set_ranks.begin(), q.set_ranks.end());
  return m;
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
  timeline_ = opts_.timeline;
  if (!timeline_ && !opts_.config.timeline.empty()) {
    Status s;
    own_timeline_ = TimelineWriter::open(timeline_rank_path(opts_.config.timeline, t.rank()), &s);
    if (!s.ok()) return s;
    timeline_ = own_timeline_.get();
  }
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
  if (timeline_ && opts_.config.timeline_mark_cycles)
    timeline_->instant(me, kLaneCycle, "CYCLE_START", "cycle", ts_us(started));
  std::vector<ProcessSet*> sets;
  bool want_shutdown;
  int64_t bytes_before = 0;
  {
    std::unique_lock<Mutex> lk(*queue_mu_);
    for (auto& [id, ps] : sets_->members()) sets.push_back(ps.get());
    want_shutdown = scheduler_->shutdown_requested_locked();
    cycle_index_ = ++stats_.cycles;
    bytes_before = stats_.bytes_allreduced;
  }
  bool stop = false;
  std::optional<Tunables> tunables;
  for (ProcessSet* ps : sets) {
    std::vector<TensorRequest> incoming;
    {
      std::unique_lock<Mutex> lk(*queue_mu_);
      incoming.swap(ps->incoming);
    }
    const double t0 = p.now();
    StatusOr<NegotiationResult> negotiated =
        ps->controller->negotiate(std::move(incoming), ps->id == 0 && want_shutdown);
    const double t1 = p.now();
    {
      std::unique_lock<Mutex> lk(*queue_mu_);
      stats_.negotiation_s += t1 - t0;
      if (negotiated.ok()) {
        stats_.cache_hits += negotiated->cache_hits;
        stats_.cache_misses += negotiated->cache_misses;
      }
    }
    if (!negotiated.ok()) {
      HVD_LOG(log_, kError, "negotiation failed: " << negotiated.status().message());
      fail_all(negotiated.status());
      return false;
    }
    const NegotiationResult& res = *negotiated;
    for (const Response& r : res.responses) {
      Status s = perform(*ps, r);
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

RuntimeStats RuntimeImpl::stats() const {
  if (!queue_mu_) return stats_;
  std::unique_lock<Mutex> lk(*queue_mu_);
  RuntimeStats st = stats_;
  st.caller_cycles += scheduler_->caller_cycles_locked();
  return st;
}

Status RuntimeImpl::perform(ProcessSet& ps, const Response& r) {
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
  return Executor(env, ps, r).run();
}

Handle RuntimeImpl::enqueue(OpRequest req) {
  if (!running_)
    return finished_handle(Status::Precondition("hvd runtime is not running (call init/start first)"));
  Status s = validate(req);
  if (!s.ok()) return finished_handle(s);
  std::unique_lock<Mutex> lk(*queue_mu_);
  if (stopped_) return finished_handle(failure_.ok() ? Status::Aborted("runtime stopped") : failure_);
  ProcessSet* found = sets_->find_locked(req.process_set);
  if (!found) {
    const bool exists = sets_->size_of(req.process_set) > 0;
    return finished_handle(Status::InvalidArgument(
        exists ? "rank " + std::to_string(world().rank()) + " is not a member of process set " + std::to_string(req.process_set)
               : "process set " + std::to_string(req.process_set) + " does not exist"));
  }
  ProcessSet& ps = *found;
  auto [slot, fresh] = ps.table.try_emplace(req.name);
  if (!fresh)
    return finished_handle(Status::InvalidArgument(
        "a tensor named '" + req.name + "' is already pending on this rank; names must be unique "
        "until the operation completes"));
  auto h = std::make_shared<HandleImpl>(signal_);
  ps.incoming.push_back(to_message(req, ps.t->rank()));
  const bool caller_runs = scheduler_->caller_will_drive_locked(req.caller_waits);
  slot->second = TensorEntry{std::move(req), h, opts_.platform->now()};
  lk.unlock();
  scheduler_->enqueued(caller_runs);
  return h;
}

Status RuntimeImpl::add_process_set(const std::vector<int>& ranks, int* id) {
  OpRequest q;
  q.op = OpType::kAddProcessSet;
  q.name = "process_set." + std::to_string(add_set_calls_++);
  q.set_ranks = ranks;
  q.input.shape = {};
  Handle h = enqueue(std::move(q));
  Status s = h->wait();
  if (s.ok() && id) *id = static_cast<HandleImpl&>(*h).process_set_id();
  return s;
}

Status RuntimeImpl::remove_process_set(int id) {
  OpRequest q;
  q.op = OpType::kRemoveProcessSet;
  q.name = "process_set." + std::to_string(add_set_calls_++);
  q.root = id;
  q.input.shape = {};
  q.caller_waits = true;
  return enqueue(std::move(q))->wait();
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

namespace hvd {

Status RuntimeImpl::validate(const OpRequest& q) const {
  // The prefix of every message, built only when there is an error to report.
  auto what = [&q] { return std::string(optype_name(q.op)) + " '" + q.name + "': "; };
  if (q.name.empty()) return Status::InvalidArgument(std::string(optype_name(q.op)) + ": tensor name is empty");
  for (int64_t d : q.input.shape)
    if (d < 0) return Status::InvalidArgument(what() + "negative dimension in shape " + shape_string(q.input.shape));
  Device* dev = q.input.device == DeviceKind::kGPU ? opts_.gpu : opts_.cpu;
  if (!dev) return Status::InvalidArgument(what() + "tensor is on the GPU but this runtime has no GPU device");
  const bool needs_data = q.op != OpType::kBarrier && q.op != OpType::kJoin &&
                          q.op != OpType::kAddProcessSet && q.op != OpType::kRemoveProcessSet;
  if (needs_data && !q.input.data && q.input.count() > 0 && !dev->allows_phantom())
    return Status::InvalidArgument(what() + "input tensor has no storage");
  if (!std::isfinite(q.prescale) || !std::isfinite(q.postscale))
    return Status::InvalidArgument(what() + "scale factors must be finite");
  const int known = sets_->size_of(q.process_set);  // -1: no such set (enqueue says so)
  const int size = known >= 0 ? known : world().size();
  switch (q.op) {
    case OpType::kAllreduce:
      if (q.output.shape != q.input.shape || q.output.dtype != q.input.dtype || q.output.device != q.input.device)
        return Status::InvalidArgument(what() + "output must have the input's shape " + shape_string(q.input.shape) +
                                       ", dtype and device (got " + shape_string(q.output.shape) + ")");
      if (!q.output.data && q.output.count() > 0 && !dev->allows_phantom())
        return Status::InvalidArgument(what() + "output tensor has no storage");
      break;
    case OpType::kBroadcast:
      if (q.root < 0 || q.root >= size)
        return Status::InvalidArgument(what() + "root rank " + std::to_string(q.root) + " is outside [0, " + std::to_string(size) + ")");
      break;
    case OpType::kAllgather:
    case OpType::kReducescatter:
      if (q.input.shape.empty()) return Status::InvalidArgument(what() + "needs a tensor with at least one dimension");
      break;
    case OpType::kAlltoall: {
      if (q.input.shape.empty()) return Status::InvalidArgument(what() + "needs a tensor with at least one dimension");
      if (q.splits.empty()) {
        if (q.input.shape[0] % size != 0)
          return Status::InvalidArgument(what() + "first dimension " + std::to_string(q.input.shape[0]) +
                                         " does not divide evenly among " + std::to_string(size) + " ranks; give splits");
        break;
      }
      if (static_cast<int>(q.splits.size()) != size)
        return Status::InvalidArgument(what() + "splits has " + std::to_string(q.splits.size()) + " entries, expected " + std::to_string(size));
      int64_t sum = 0;
      for (int64_t v : q.splits) {
        if (v < 0) return Status::InvalidArgument(what() + "negative split");
        sum += v;
      }
      if (sum != q.input.shape[0])
        return Status::InvalidArgument(what() + "splits add up to " + std::to_string(sum) + ", but the first dimension is " + std::to_string(q.input.shape[0]));
      break;
    }
    case OpType::kAddProcessSet: {
      if (q.process_set != 0) return Status::InvalidArgument("add_process_set runs on the world set only");
      std::set<int> seen;
      for (int r : q.set_ranks) {
        if (r < 0 || r >= world().size())
          return Status::InvalidArgument("add_process_set: rank " + std::to_string(r) + " is outside the world");
        if (!seen.insert(r).second) return Status::InvalidArgument("add_process_set: rank " + std::to_string(r) + " listed twice");
      }
      if (seen.empty()) return Status::InvalidArgument("add_process_set: no ranks");
      break;
    }
    case OpType::kRemoveProcessSet:
      if (q.process_set != 0) return Status::InvalidArgument("remove_process_set runs on the world set only");
      if (q.root == 0) return Status::InvalidArgument("remove_process_set: process set 0 (the world) cannot be removed");
      if (sets_->size_of(q.root) <= 0)
        return Status::InvalidArgument("remove_process_set: process set " + std::to_string(q.root) + " does not exist");
      break;
    default:
      break;
  }
  return Status::OK();
}

}  // namespace hvd
