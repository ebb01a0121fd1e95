// A collective sweep in simulated time (the counterpart of `hvdbench --collective allreduce`):
// the scenario's cluster and runtime, np ranks, one allreduce per call through the full
// runtime API, sizes from min to max; time per call of the slowest rank.
#pragma once

#include <cstdint>
#include <vector>

#include "hvd/sim/scenario.h"

namespace hvd::sim {

/// One size of a sweep.
struct CollectivePoint {
  int64_t bytes = 0;   ///< float32 payload per rank
  double seconds = 0;  ///< mean time per call, slowest rank
};

/// Simulates float32 sum allreduces of each size (in a forked child). `iters` timed calls
/// after `warmup` per size, as hvdbench does.
Status simulate_allreduce_sweep(const ScenarioPoint& pt, int np, const std::vector<int64_t>& sizes,
                                int warmup, int iters, std::vector<CollectivePoint>* out);

}  // namespace hvd::sim
