#include "hvd/replay/training_step.h"

#include "step_internal.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace hvd::replay {

namespace {

DataType dtype_of(const std::string& name) {
  auto d = parse_dtype(name);
  return d ? *d : DataType::kFloat32;
}

// Gradient storage for one rank (empty when phantom): host vectors, or blocks of
// `memory` (a GPU device) released with it. Each gradient is kept as its address and
// type; its Tensor is built when it is submitted (a simulation of thousands of ranks
// would otherwise hold a Tensor and its shape per gradient and rank, 64 bytes each).
struct Gradients {
  std::vector<std::vector<uint8_t>> bufs;
  std::vector<void*> data;
  std::vector<DataType> dtype;
  DeviceKind device = DeviceKind::kCPU;
  Device* memory = nullptr;
  std::vector<void*> blocks;
  Gradients() = default;
  Gradients(const Gradients&) = delete;
  Gradients& operator=(const Gradients&) = delete;
  Gradients(Gradients&& o) noexcept
      : bufs(std::move(o.bufs)),
        data(std::move(o.data)),
        dtype(std::move(o.dtype)),
        device(o.device),
        memory(o.memory),
        blocks(std::exchange(o.blocks, {})) {}
  ~Gradients() {
    if (!memory || blocks.empty()) return;
    memory->synchronize();
    for (void* p : blocks) memory->release(p);
  }
  Tensor tensor(const workloads::StepPlan& plan, size_t i) const {
    return Tensor{data[i], dtype[i], {plan.tensors[i].elements}, device};
  }
};

Gradients make_gradients(const workloads::StepPlan& plan, const ReplayOptions& o) {
  Gradients g;
  g.memory = o.phantom ? nullptr : o.memory;
  g.device = o.device;
  if (!o.phantom && !g.memory) g.bufs.resize(plan.tensors.size());  // host storage only
  g.data.assign(plan.tensors.size(), nullptr);
  g.dtype.reserve(plan.tensors.size());
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const auto& t = plan.tensors[i];
    const DataType dt = dtype_of(t.dtype);
    g.dtype.push_back(dt);
    void*& x = g.data[i];
    if (o.phantom) {
      // Addresses without storage where the device hands them out (a simulated one): the
      // model can then tell one tensor from another, e.g. which bytes are still in cache.
      if (o.memory && o.memory->allows_phantom()) x = o.memory->allocate(static_cast<size_t>(t.bytes));
    } else if (g.memory) {
      x = g.memory->allocate(static_cast<size_t>(t.bytes));
      if (x) g.blocks.push_back(x);
      g.memory->fill_identity(x, t.elements, dt, ReduceOp::kSum);  // zeros
    } else {
      g.bufs[i].assign(static_cast<size_t>(t.bytes), 0);
      x = g.bufs[i].data();
    }
  }
  return g;
}

struct StepClock {
  Platform& p;
  const ReplayOptions& o;
  int pid;
  void compute(const char* name, double s) {
    const double t0 = p.now();
    if (s > 0) p.compute(s);
    if (o.timeline)
      o.timeline->complete(pid, kLaneCompute, name, "compute", (t0 - o.time_origin) * 1e6,
                           (p.now() - t0) * 1e6);
  }
};

// One step: forward, backward with gradients submitted when ready, wait, optimizer.
Status run_step(Runtime& rt, Platform& p, const workloads::StepPlan& plan, Gradients& g,
                const ReplayOptions& o, StepSample* sample) {
  StepClock clock{p, o, rt.rank()};
  const double t0 = p.now();
  const StepTiming* own = o.timing;
  for (int k = 1; k < o.accumulation_steps; ++k) {  // accumulated locally, nothing sent
    clock.compute("FORWARD", own ? own->fwd_s : plan.fwd_s);
    clock.compute("BACKWARD", own ? own->bwd_s : plan.bwd_s);
  }
  clock.compute("FORWARD", own ? own->fwd_s : plan.fwd_s);
  const size_t n = plan.tensors.size();
  std::vector<Handle> handles(o.ensemble ? 0 : n);
  // Backward runs to absolute deadlines (start + ready time): every sleep overshoots a
  // little, and with one sleep per layer the overshoots would otherwise add up.
  const double bwd_start = p.now();
  const double bwd_end = bwd_start + (own ? own->bwd_s : plan.bwd_s);
  auto ready_at = [&](size_t i) {
    return o.post_accumulation ? bwd_end : bwd_start + (own ? own->ready_s[i] : plan.tensors[i].ready_s);
  };
  auto submit = [&](size_t i, double at) {
    OpRequest q;
    q.op = OpType::kAllreduce;
    q.name = plan.tensors[i].name;
    q.input = g.tensor(plan, i);
    q.output = q.input;
    q.ready_at = at;
    handles[i] = rt.enqueue(std::move(q));
  };
  if (!o.ensemble && !o.wake_per_layer && rt.paced_cycles()) {
    // Paced cycles see the submitted gradients only when a cycle starts: the loop submits,
    // at each cycle start, those ready by then (Runtime::set_cycle_hook), and this thread
    // sleeps through the backward pass once instead of waking for every layer (a wake-up
    // per layer and rank was a third of a simulation's events at thousands of ranks). The
    // loop sees the same requests at the same times, with the same ready times.
    size_t next = 0;
    auto submit_due = [&](double upto) {
      while (next < n && ready_at(next) <= upto) {
        const size_t i = next++;
        submit(i, ready_at(i));
      }
    };
    rt.set_cycle_hook(submit_due);
    if (bwd_end > p.now()) p.compute(bwd_end - p.now());
    rt.set_cycle_hook(nullptr);
    submit_due(std::numeric_limits<double>::infinity());  // ready, not yet seen by a cycle
    if (o.timeline) {  // the backward segments the per-layer sleeps would have drawn
      double t = bwd_start;
      auto segment = [&](double until) {
        if (until <= t) return;
        o.timeline->complete(rt.rank(), kLaneCompute, "BACKWARD", "compute", (t - o.time_origin) * 1e6,
                             (until - t) * 1e6);
        t = until;
      };
      for (size_t i = 0; i < n; ++i) segment(ready_at(i));
      segment(bwd_end);
    }
  } else {
    for (size_t i = 0; i < n; ++i) {
      const double left = ready_at(i) - p.now();
      if (left > 0) clock.compute("BACKWARD", left);
      if (!o.ensemble) submit(i, -1);
    }
    if (bwd_end > p.now()) clock.compute("BACKWARD", bwd_end - p.now());
  }
  const double compute_end = p.now();
  const double exec_before = rt.stats().execution_s;
  Status first;
  for (auto& h : handles) {
    Status s = h->wait();
    if (!s.ok() && first.ok()) first = s;
    sample->last_cycle = std::max(sample->last_cycle, h->cycle());
  }
  if (!first.ok()) return first;
  const double comm_end = p.now();
  const double exec_in_window = rt.stats().execution_s - exec_before;
  clock.compute("OPTIMIZER", o.optimizer_s);
  const double t1 = p.now();
  if (o.timeline)
    o.timeline->complete(rt.rank(), kLaneCompute, "STEP", "compute", (t0 - o.time_origin) * 1e6,
                         (t1 - t0) * 1e6);
  sample->step_s = t1 - t0;
  sample->compute_s = (compute_end - t0) + (t1 - comm_end);
  sample->exposed_comm_s = comm_end - compute_end;
  sample->negotiation_s = std::max(0.0, std::min(sample->exposed_comm_s,
                                                 sample->exposed_comm_s - exec_in_window));
  return Status::OK();
}

}  // namespace

void summarise_steps(const workloads::StepPlan& plan, int accumulation_steps, ReplayResult* out) {
  const double samples = static_cast<double>(plan.batch) * accumulation_steps;  // per step
  const double n = static_cast<double>(out->steps.size());
  StepSample& m = out->mean;
  std::vector<double> rates;
  for (const StepSample& s : out->steps) {
    m.step_s += s.step_s / n;
    m.compute_s += s.compute_s / n;
    m.exposed_comm_s += s.exposed_comm_s / n;
    m.negotiation_s += s.negotiation_s / n;
    rates.push_back(samples / s.step_s);
  }
  out->samples_per_sec = samples / m.step_s;
  if (rates.size() > 1) {
    double mean = 0, var = 0;
    for (double r : rates) mean += r / n;
    for (double r : rates) var += (r - mean) * (r - mean) / (n - 1);
    out->samples_per_sec_ci95 = t_quantile_975(rates.size() - 1) * std::sqrt(var / n);
  }
}

double t_quantile_975(size_t dof) {
  static const double kT[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                              2.262, 2.228,  2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110,
                              2.101, 2.093,  2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
                              2.052, 2.048,  2.045, 2.042};
  if (dof == 0) return 0;
  if (dof <= 30) return kT[dof];
  return dof <= 60 ? 2.000 : dof <= 120 ? 1.980 : 1.960;
}

StepTiming timing_of(const workloads::StepPlan& plan) {
  StepTiming t;
  t.fwd_s = plan.fwd_s;
  t.bwd_s = plan.bwd_s;
  t.ready_s.reserve(plan.tensors.size());
  for (const auto& x : plan.tensors) t.ready_s.push_back(x.ready_s);
  return t;
}

Status replay_training(Runtime& rt, Platform& p, const workloads::StepPlan& plan,
                       const ReplayOptions& o, ReplayResult* out) {
  if (o.steps <= 0) return Status::InvalidArgument("replay needs at least one measured step");
  if (o.sharding.mode != Sharding::kNone) return replay_sharded(rt, p, plan, o, out);
  if (o.timing && o.timing->ready_s.size() != plan.tensors.size())
    return Status::InvalidArgument("replay: the rank's timing has " + std::to_string(o.timing->ready_s.size()) +
                                   " tensor times for a plan of " + std::to_string(plan.tensors.size()) + " tensors");
  Gradients g = make_gradients(plan, o);
  // Device gradients are ready (zeroed) before the first one is enqueued.
  if (g.memory) g.memory->synchronize();
  if (g.memory) HVD_RETURN_IF_ERROR(g.memory->last_error());
  *out = ReplayResult{};
  for (const auto& t : plan.tensors) out->allreduce_bytes += o.ensemble ? 0 : t.bytes;
  out->allreduce_calls = o.ensemble ? 0 : static_cast<int64_t>(plan.tensors.size());
  double exec_start = 0;
  int warmup = o.warmup_steps;
  if (o.max_tuning_steps > 0 && !o.ensemble && rt.autotune_state().enabled) warmup = std::max(warmup, 1);
  for (int step = 0; step < warmup + o.steps; ++step) {
    if (step == warmup) exec_start = rt.stats().execution_s;
    StepSample s;
    HVD_RETURN_IF_ERROR(run_step(rt, p, plan, g, o, &s));
    if (step >= warmup) out->steps.push_back(s);
    if (o.on_step) o.on_step(step, s);
    // While the autotuner works, the step is one more warm-up step. Every rank decides
    // alike: the final setting took effect at the end of a cycle numbered the same on all
    // ranks, before the cycle that finished this step's last gradient (or it did not).
    if (step == warmup - 1 && out->tuning_steps < o.max_tuning_steps && !o.ensemble) {
      const AutotuneState at = rt.autotune_state();
      if (at.enabled && !(at.done && at.done_cycle < s.last_cycle)) {
        ++warmup;
        ++out->tuning_steps;
      }
    }
  }
  out->allreduce_time_s = (rt.stats().execution_s - exec_start) / o.steps;
  if (o.ensemble && !g.data.empty()) {
    // Ensemble training: each rank trained its own model; share the results once.
    Tensor first = g.tensor(plan, 0);
    HVD_RETURN_IF_ERROR(rt.broadcast("ensemble.result", first, 0));
  }
  summarise_steps(plan, std::max(1, o.accumulation_steps), out);
  return Status::OK();
}

}  // namespace hvd::replay
