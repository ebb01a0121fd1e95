// Sharded data parallelism, replayed on the runtime (hvd/replay/sharded_step.h).
//
// A step runs unit by unit (a unit: one layer of the plan and its parameters, FSDP's flat
// parameter padded to a multiple of the shard group). Per mode, per micro-batch:
//   zero1  forward; backward, the K-th micro-batch reduce-scattering each unit's gradients
//          as its backward ends; optimizer on the shard; allgather of every updated unit.
//   zero2  as zero1, but every micro-batch reduce-scatters (the gradients are sharded).
//   fsdp   forward: wait unit u's allgather, issue u+1's (forward prefetch), compute u;
//          backward, last unit first: wait u's allgather, issue u-1's (BACKWARD_PRE
//          prefetch), compute u, reduce-scatter u's gradients; optimizer on the shard.
//   hsdp   fsdp inside the shard group; each unit's gradient shard is then allreduced across
//          the replicas (the ranks of the same place in every group), issued once the
//          reduce-scatter of the unit before has ended.
// The requests go to the runtime as any other, so they are negotiated, fused and run in the
// order issued (one queue: the allgather, reduce-scatter and allreduce "streams" share the
// runtime's executor, as NCCL kernels share the links). Each kind's busy time is drawn on a
// lane of its own: tid 4 allgather, 5 reduce-scatter, 6 allreduce.
#include <algorithm>
#include <limits>
#include <string>

#include "hvd/replay/sharded_step.h"
#include "step_internal.h"

namespace hvd::replay {

namespace {

constexpr int kLaneAllgather = 4, kLaneReducescatter = 5, kLaneAllreduce = 6;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

enum Kind { kAg = 0, kRs = 1, kAr = 2 };

// One rank's sharded step: buffers, process sets, issued requests and their times.
class ShardedReplay {
 public:
  ShardedReplay(Runtime& rt, Platform& p, const workloads::StepPlan& plan, const ReplayOptions& o)
      : rt_(rt), p_(p), plan_(plan), o_(o), units_(shard_units(plan)) {}

  Status setup() {
    HVD_RETURN_IF_ERROR(resolve_shard_size(o_.sharding, rt_.size(), &shard_));
    const int world = rt_.size(), me = rt_.rank();
    replicas_ = world / shard_;
    if (shard_ < world) {  // hsdp: every rank adds every group (add_process_set is world-collective)
      for (int g = 0; g < replicas_; ++g) {
        std::vector<int> ranks;
        for (int i = 0; i < shard_; ++i) ranks.push_back(g * shard_ + i);
        int id = 0;
        HVD_RETURN_IF_ERROR(rt_.add_process_set(ranks, &id));
        if (g == me / shard_) shard_set_ = id;
      }
      for (int i = 0; i < shard_ && replicas_ > 1; ++i) {
        std::vector<int> ranks;
        for (int g = 0; g < replicas_; ++g) ranks.push_back(g * shard_ + i);
        int id = 0;
        HVD_RETURN_IF_ERROR(rt_.add_process_set(ranks, &id));
        if (i == me % shard_) replica_set_ = id;
      }
    }
    const size_t pb = dtype_size(o_.sharding.param_dtype), gb = dtype_size(o_.sharding.grad_dtype);
    for (const ShardUnit& u : units_) {
      const int64_t shard = ceil_div(u.elements, shard_);
      shard_elems_.push_back(shard);
      params_.push_back(buffer(static_cast<size_t>(shard) * pb));
      grads_.push_back(buffer(static_cast<size_t>(shard * shard_) * gb));
      grad_shards_.push_back(buffer(static_cast<size_t>(shard) * gb));
    }
    fwd_factor_ = o_.timing && plan_.fwd_s > 0 ? o_.timing->fwd_s / plan_.fwd_s : 1.0;
    bwd_factor_ = o_.timing && plan_.bwd_s > 0 ? o_.timing->bwd_s / plan_.bwd_s : 1.0;
    return Status::OK();
  }

  ~ShardedReplay() {
    if (!o_.memory) return;
    for (void* b : blocks_) o_.memory->release(b);
  }

  /// One step; its sample and the busy time of each kind.
  Status step(StepSample* sample, double busy[3]) {
    const double t0 = p_.now();
    compute_s_ = 0;
    issued_.clear();
    traffic_ = ShardTraffic{};
    const int k_steps = std::max(1, o_.accumulation_steps);
    const Sharding mode = o_.sharding.mode;
    const bool full_shard = mode == Sharding::kFsdp || mode == Sharding::kHsdp;
    for (int k = 0; k < k_steps; ++k) {
      const bool last = k == k_steps - 1;
      HVD_RETURN_IF_ERROR(full_shard ? forward_gathered() : forward_whole());
      HVD_RETURN_IF_ERROR(backward(full_shard, mode == Sharding::kZero2 || full_shard || last));
    }
    HVD_RETURN_IF_ERROR(drain());
    // The update touches the rank's shard of the parameters and optimizer state.
    compute("OPTIMIZER", o_.optimizer_s / shard_);
    if (!full_shard) {  // zero1/zero2: every rank gathers the updated parameters
      ag_.assign(units_.size(), nullptr);
      for (size_t u = 0; u < units_.size(); ++u) ag_[u] = gather(u, ".ag");
      HVD_RETURN_IF_ERROR(drain());
    }
    const double t1 = p_.now();
    if (o_.timeline)
      o_.timeline->complete(rt_.rank(), kLaneCompute, "STEP", "compute", us(t0), (t1 - t0) * 1e6);
    sample->step_s = t1 - t0;
    sample->compute_s = compute_s_;
    sample->exposed_comm_s = std::max(0.0, sample->step_s - compute_s_);
    return account(busy);
  }

  const std::vector<ShardUnit>& units() const { return units_; }
  /// What the last step issued.
  const ShardTraffic& traffic() const { return traffic_; }
  int shard() const { return shard_; }

 private:
  struct Issued {
    Handle h;
    Kind kind;
    double issued = 0;
    std::string name;
    std::shared_ptr<double> done;  ///< set by the runtime when the request ends
  };

  void* buffer(size_t bytes) {
    if (o_.phantom) {
      if (!o_.memory || !o_.memory->allows_phantom()) return nullptr;
      void* b = o_.memory->allocate(bytes);
      if (b) blocks_.push_back(b);
      return b;
    }
    host_.emplace_back(bytes, 0);
    return host_.back().data();
  }

  double us(double t) const { return (t - o_.time_origin) * 1e6; }

  void compute(const char* name, double s) {
    const double t0 = p_.now();
    if (s > 0) p_.compute(s);
    compute_s_ += p_.now() - t0;
    if (o_.timeline && s > 0)
      o_.timeline->complete(rt_.rank(), kLaneCompute, name, "compute", us(t0), (p_.now() - t0) * 1e6);
  }

  Handle issue(OpType op, Kind kind, const std::string& name, void* data, DataType dt, int64_t elements, int set) {
    OpRequest q;
    q.op = op;
    q.name = name;
    q.input = Tensor{data, dt, {elements}, o_.device};
    if (op == OpType::kAllreduce) q.output = q.input;
    q.process_set = set;
    auto done = std::make_shared<double>(-1);
    Platform* p = &p_;
    q.on_done = [done, p](const Status&, const OpHandle&) { *done = p->now(); };
    const int64_t bytes = elements * static_cast<int64_t>(dtype_size(dt));
    if (kind == kAg) {
      ++traffic_.allgather_calls;
      traffic_.allgather_bytes += bytes * shard_;  // the gathered buffer
    } else if (kind == kRs) {
      ++traffic_.reducescatter_calls;
      traffic_.reducescatter_bytes += bytes;
    } else {
      ++traffic_.allreduce_calls;
      traffic_.allreduce_bytes += bytes;
    }
    Handle h = rt_.enqueue(std::move(q));
    issued_.push_back(Issued{h, kind, p_.now(), name, done});
    return h;
  }

  Handle gather(size_t u, const char* tag) {
    if (units_[u].elements == 0) return nullptr;
    return issue(OpType::kAllgather, kAg, units_[u].name + tag, params_[u], o_.sharding.param_dtype, shard_elems_[u],
                 shard_set_);
  }

  Status wait(Handle& h) {
    if (!h) return Status::OK();
    Status s = h->wait();
    h = nullptr;
    return s;
  }

  Status forward_whole() {
    for (const ShardUnit& u : units_) compute("FORWARD", u.fwd_s * fwd_factor_);
    return Status::OK();
  }

  Status forward_gathered() {
    ag_.assign(units_.size(), nullptr);
    if (!units_.empty()) ag_[0] = gather(0, ".ag");
    for (size_t u = 0; u < units_.size(); ++u) {
      HVD_RETURN_IF_ERROR(wait(ag_[u]));
      if (u + 1 < units_.size()) ag_[u + 1] = gather(u + 1, ".ag");  // forward prefetch
      compute("FORWARD", units_[u].fwd_s * fwd_factor_);
    }
    return Status::OK();
  }

  // Backward, last unit first; `reduce`: this micro-batch reduce-scatters its gradients.
  Status backward(bool gathered, bool reduce) {
    const size_t n = units_.size();
    if (gathered) {
      ag_.assign(n, nullptr);
      if (n > 0) ag_[n - 1] = gather(n - 1, ".ag_bwd");
    }
    rs_.resize(n);
    ar_.resize(n);
    for (size_t u = n; u-- > 0;) {
      if (gathered) {
        HVD_RETURN_IF_ERROR(wait(ag_[u]));
        if (u > 0) ag_[u - 1] = gather(u - 1, ".ag_bwd");  // backward prefetch
      }
      compute("BACKWARD", units_[u].bwd_s * bwd_factor_);
      if (!reduce || units_[u].elements == 0) continue;
      HVD_RETURN_IF_ERROR(wait(rs_[u]));  // the shard accumulates the previous micro-batch's
      rs_[u] = issue(OpType::kReducescatter, kRs, units_[u].name + ".rs", grads_[u], o_.sharding.grad_dtype,
                     shard_elems_[u] * shard_, shard_set_);
      if (u + 1 < n) HVD_RETURN_IF_ERROR(replicate(u + 1));
    }
    for (size_t u = n; reduce && u-- > 0;) HVD_RETURN_IF_ERROR(replicate(u));  // those not yet replicated
    return Status::OK();
  }

  // hsdp: allreduce unit u's gradient shard across the replicas once its reduce-scatter ended.
  Status replicate(size_t u) {
    if (replica_set_ < 0 || units_[u].elements == 0 || !rs_[u]) return Status::OK();
    HVD_RETURN_IF_ERROR(wait(rs_[u]));
    HVD_RETURN_IF_ERROR(wait(ar_[u]));
    ar_[u] = issue(OpType::kAllreduce, kAr, units_[u].name + ".ar", grad_shards_[u], o_.sharding.grad_dtype,
                   shard_elems_[u], replica_set_);
    return Status::OK();
  }

  Status drain() {
    Status first;
    for (Issued& i : issued_) {
      Status s = i.h->wait();
      if (!s.ok() && first.ok()) first = s;
    }
    for (auto* v : {&ag_, &rs_, &ar_})
      for (Handle& h : *v) h = nullptr;
    return first;
  }

  // Each kind's busy time: the runtime runs requests one at a time in the order issued, so a
  // request occupies its stream from when it was issued, or the one before it ended, to its end.
  Status account(double busy[3]) {
    static const char* kNames[] = {"ALLGATHER", "REDUCESCATTER", "ALLREDUCE"};
    static const int kLanes[] = {kLaneAllgather, kLaneReducescatter, kLaneAllreduce};
    double prev_end = -std::numeric_limits<double>::infinity();
    for (const Issued& i : issued_) {
      const double end = *i.done >= 0 ? *i.done : p_.now();
      const double start = std::min(end, std::max(i.issued, prev_end));
      prev_end = std::max(prev_end, end);
      busy[i.kind] += end - start;
      if (o_.timeline)
        o_.timeline->complete(rt_.rank(), kLanes[i.kind], kNames[i.kind], "stream", us(start), (end - start) * 1e6,
                              "\"tensor\":\"" + i.name + "\"");
    }
    issued_.clear();
    return Status::OK();
  }

  Runtime& rt_;
  Platform& p_;
  const workloads::StepPlan& plan_;
  const ReplayOptions& o_;
  std::vector<ShardUnit> units_;
  int shard_ = 1, replicas_ = 1, shard_set_ = 0, replica_set_ = -1;
  std::vector<int64_t> shard_elems_;
  std::vector<void*> params_, grads_, grad_shards_, blocks_;
  std::vector<std::vector<uint8_t>> host_;
  std::vector<Handle> ag_, rs_, ar_;
  std::vector<Issued> issued_;
  ShardTraffic traffic_;
  double fwd_factor_ = 1, bwd_factor_ = 1, compute_s_ = 0;
};

}  // namespace

std::optional<Sharding> parse_sharding(std::string_view name) {
  for (Sharding s : {Sharding::kNone, Sharding::kZero1, Sharding::kZero2, Sharding::kFsdp, Sharding::kHsdp})
    if (name == sharding_name(s)) return s;
  return std::nullopt;
}

const char* sharding_name(Sharding s) {
  switch (s) {
    case Sharding::kNone: return "none";
    case Sharding::kZero1: return "zero1";
    case Sharding::kZero2: return "zero2";
    case Sharding::kFsdp: return "fsdp";
    case Sharding::kHsdp: return "hsdp";
  }
  return "none";
}

std::vector<ShardUnit> shard_units(const workloads::StepPlan& plan) {
  std::vector<ShardUnit> units;
  if (plan.layers.empty()) {
    ShardUnit u{"model", 0, plan.fwd_s, plan.bwd_s};
    for (const auto& t : plan.tensors) u.elements += t.elements;
    units.push_back(u);
    return units;
  }
  for (const auto& l : plan.layers) units.push_back(ShardUnit{l.name, 0, l.fwd_s, l.bwd_s});
  for (const auto& t : plan.tensors) {
    const int l = t.layer >= 0 && t.layer < static_cast<int>(units.size()) ? t.layer : static_cast<int>(units.size()) - 1;
    units[static_cast<size_t>(l)].elements += t.elements;
  }
  return units;
}

Status resolve_shard_size(const ShardingOptions& o, int world, int* shard_size) {
  if (world <= 0) return Status::InvalidArgument("sharding: no ranks");
  int s = o.mode == Sharding::kHsdp && o.shard_size > 0 ? std::min(o.shard_size, world) : world;
  if (o.mode == Sharding::kHsdp && o.shard_size <= 0)
    return Status::InvalidArgument("workload.sharding: hsdp needs a shard group (an NVLink domain or workload.shard_size)");
  if (world % s != 0)
    return Status::InvalidArgument("workload.shard_size: " + std::to_string(s) + " does not divide the " +
                                   std::to_string(world) + " ranks into whole shard groups");
  *shard_size = s;
  return Status::OK();
}

ShardTraffic shard_traffic(const std::vector<ShardUnit>& units, const ShardingOptions& o, int world,
                           int accumulation_steps) {
  ShardTraffic t;
  int s = world;
  if (!resolve_shard_size(o, world, &s).ok()) return t;
  const int64_t k = std::max(1, accumulation_steps);
  const int64_t pb = static_cast<int64_t>(dtype_size(o.param_dtype)), gb = static_cast<int64_t>(dtype_size(o.grad_dtype));
  const bool replicate = o.mode == Sharding::kHsdp && world / s > 1;
  for (const ShardUnit& u : units) {
    if (u.elements == 0) continue;
    const int64_t padded = ceil_div(u.elements, s) * s;
    switch (o.mode) {
      case Sharding::kNone:
        t.allreduce_calls += 1;
        t.allreduce_bytes += u.elements * gb;
        break;
      case Sharding::kZero1:
      case Sharding::kZero2: {
        const int64_t rs = o.mode == Sharding::kZero1 ? 1 : k;
        t.reducescatter_calls += rs;
        t.reducescatter_bytes += rs * padded * gb;
        t.allgather_calls += 1;
        t.allgather_bytes += padded * pb;
        break;
      }
      case Sharding::kFsdp:
      case Sharding::kHsdp:
        t.allgather_calls += 2 * k;
        t.allgather_bytes += 2 * k * padded * pb;
        t.reducescatter_calls += k;
        t.reducescatter_bytes += k * padded * gb;
        if (replicate) {
          t.allreduce_calls += k;
          t.allreduce_bytes += k * (padded / s) * gb;
        }
        break;
    }
  }
  return t;
}

Status replay_sharded(Runtime& rt, Platform& p, const workloads::StepPlan& plan, const ReplayOptions& o,
                      ReplayResult* out) {
  ShardedReplay r(rt, p, plan, o);
  HVD_RETURN_IF_ERROR(r.setup());
  *out = ReplayResult{};
  double busy[3] = {0, 0, 0};
  for (int step = 0; step < o.warmup_steps + o.steps; ++step) {
    StepSample s;
    double b[3] = {0, 0, 0};
    HVD_RETURN_IF_ERROR(r.step(&s, b));
    if (step >= o.warmup_steps) {
      out->steps.push_back(s);
      for (int i = 0; i < 3; ++i) busy[i] += b[i];
    }
    if (o.on_step) o.on_step(step, s);
  }
  const ShardTraffic& t = r.traffic();  // every step issues the same
  out->allgather_calls = t.allgather_calls;
  out->allgather_bytes = t.allgather_bytes;
  out->reducescatter_calls = t.reducescatter_calls;
  out->reducescatter_bytes = t.reducescatter_bytes;
  out->allreduce_calls = t.allreduce_calls;
  out->allreduce_bytes = t.allreduce_bytes;
  out->allgather_time_s = busy[kAg] / o.steps;
  out->reducescatter_time_s = busy[kRs] / o.steps;
  out->allreduce_time_s = busy[kAr] / o.steps;
  summarise_steps(plan, std::max(1, o.accumulation_steps), out);
  return Status::OK();
}

}  // namespace hvd::replay
