// What the two replays (training_step.cc, sharded_step.cc) share, private to the library.
#pragma once

#include "hvd/replay/training_step.h"

namespace hvd::replay {

/// Fills out->mean, samples_per_sec and its interval from out->steps.
void summarise_steps(const workloads::StepPlan& plan, int accumulation_steps, ReplayResult* out);

/// replay_training for a sharded mode (opts.sharding.mode != kNone).
Status replay_sharded(Runtime& rt, Platform& p, const workloads::StepPlan& plan, const ReplayOptions& opts,
                      ReplayResult* out);

}  // namespace hvd::replay
