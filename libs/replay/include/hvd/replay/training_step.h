// Training-step replay: forward compute, backward layer by layer with each gradient
// submitted to the runtime as soon as it is ready (as Horovod's DistributedOptimizer
// hooks do), wait for all reductions, optimizer step. Compute is emulated on the
// Platform, so communication overlaps it exactly as in real training. The same code
// runs under hvdbench (real time) and hvdsim (simulated time).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "hvd/replay/sharded_step.h"
#include "hvd/runtime.h"
#include "hvd/timeline.h"
#include "hvd/workloads/step_plan.h"

namespace hvd::replay {

struct StepSample;

/// A rank's own compute times for a plan (a GPU slower or faster than the plan's): what
/// the replay reads of them. Names, sizes and types still come from the plan, which ranks
/// then share instead of each holding a copy (~75 KiB for ResNet-101, 300 MB at 4,096).
struct StepTiming {
  double fwd_s = 0;            ///< StepPlan::fwd_s
  double bwd_s = 0;            ///< StepPlan::bwd_s
  std::vector<double> ready_s; ///< StepPlan::tensors[i].ready_s
};

/// The times of `plan`.
StepTiming timing_of(const workloads::StepPlan& plan);

/// How to replay.
struct ReplayOptions {
  int warmup_steps = 2;                  ///< steps run before measuring
  int steps = 10;                        ///< measured steps
  bool ensemble = false;                 ///< no gradient exchange; one final broadcast/allgather
  bool phantom = false;                  ///< gradients without storage (simulated devices)
  DeviceKind device = DeviceKind::kCPU;  ///< where gradients live
  /// Allocates the gradients (zeroed) through this Device, e.g. the runtime's GPU device
  /// for device tensors (then `device` must be its kind); null: host vectors. With
  /// `phantom`, a device that allows phantom buffers (a simulated one) hands out addresses
  /// that are never touched; without one the gradients have none.
  Device* memory = nullptr;
  double optimizer_s = 0;                ///< optimizer-update compute per step
  /// Micro-batches per step (Horovod's backward_passes_per_step): the first K-1 forward and
  /// backward passes accumulate their gradients locally, the K-th submits them; a step is
  /// then K x batch samples.
  int accumulation_steps = 1;
  /// Allreduce only once the K-th backward pass has ended, all gradients at once (NVIDIA's
  /// BERT scripts' --allreduce_post_accumulation), instead of each as the backward pass
  /// produces it: the allreduce is then not hidden behind any compute.
  bool post_accumulation = false;
  TimelineWriter* timeline = nullptr;    ///< compute lane events (FORWARD/BACKWARD/...)
  double time_origin = 0;                ///< platform time of timeline ts 0
  /// Autotune (HOROVOD_AUTOTUNE): after the warm-up, keep running unmeasured steps until
  /// the tuned setting is final, at most this many (0: do not wait for the autotuner).
  int max_tuning_steps = 0;
  /// Called after every step (step counts warm-up steps from 0; measured = step >= warmup).
  std::function<void(int step, const StepSample& sample)> on_step;
  /// This rank's times instead of the plan's (one entry per plan tensor); null: the plan's.
  const StepTiming* timing = nullptr;
  /// Wake at every gradient's ready time and submit it then, even where the runtime's
  /// cycles are paced. Off (the default), paced cycles take the gradients through the
  /// cycle hook (Runtime::set_cycle_hook) and this thread sleeps through the backward pass
  /// at once: the same submissions, seen by the same cycles, with far fewer wake-ups.
  bool wake_per_layer = false;
  /// Sharded data parallelism (sharded_step.h); kNone: the allreduce step above. A sharded
  /// step runs unit by unit (shard_units) and wakes at every unit.
  ShardingOptions sharding;
};

/// Timing of one measured step on this rank.
struct StepSample {
  double step_s = 0;          ///< whole step
  double compute_s = 0;       ///< forward + backward + optimizer
  double exposed_comm_s = 0;  ///< step time not hidden behind compute
  double negotiation_s = 0;   ///< part of the exposed time not spent executing collectives
  int64_t last_cycle = -1;    ///< background cycle that completed the step's last gradient
};

/// Outcome of a replay on this rank.
struct ReplayResult {
  std::vector<StepSample> steps;     ///< measured steps
  StepSample mean;                   ///< mean over measured steps
  double samples_per_sec = 0;        ///< this rank's rate: batch / mean step time
  double samples_per_sec_ci95 = 0;   ///< half-width of the 95 % interval of the per-step rate
  int64_t allreduce_calls = 0;       ///< tensors allreduced per step
  int64_t allreduce_bytes = 0;       ///< bytes allreduced per step
  double allreduce_time_s = 0;       ///< mean time per step the runtime spent executing them
                                     ///< (sharded: the allreduce stream's busy time)
  int64_t allgather_calls = 0;       ///< sharded: parameter allgathers per step
  int64_t allgather_bytes = 0;       ///< sharded: their bytes per step (gathered buffers)
  double allgather_time_s = 0;       ///< sharded: mean busy time per step of the allgather stream
  int64_t reducescatter_calls = 0;   ///< sharded: gradient reduce-scatters per step
  int64_t reducescatter_bytes = 0;   ///< sharded: their bytes per step (input buffers)
  double reducescatter_time_s = 0;   ///< sharded: mean busy time per step of the reduce-scatter stream
  int tuning_steps = 0;              ///< unmeasured steps run while the autotuner worked
};

/// Two-sided 95 % quantile of Student's t with `dof` degrees of freedom (1.96 for large dof):
/// the 95 % interval of a mean of n samples is mean +- t(n-1) x sd / sqrt(n).
double t_quantile_975(size_t dof);

/// Replays `opts.warmup_steps + opts.steps` steps of `plan` on `rt`.
Status replay_training(Runtime& rt, Platform& p, const workloads::StepPlan& plan,
                       const ReplayOptions& opts, ReplayResult* out);

}  // namespace hvd::replay
