// A collective sweep in simulated time (the counterpart of `hvdbench --collective` and of
// nccl-tests): the scenario's cluster and runtime, np ranks, one collective per call
// through the full runtime API, sizes from min to max; time per call of the slowest rank.
#pragma once

#include <cstdint>
#include <vector>

#include "hvd/sim/nccl_model.h"
#include "hvd/sim/scenario.h"

namespace hvd::sim {

/// One size of a sweep.
struct CollectivePoint {
  int64_t bytes = 0;   ///< the size nccl-tests reports: the buffer of allreduce and
                       ///< broadcast, the whole gathered buffer of allgather, reducescatter
                       ///< and alltoall
  double seconds = 0;  ///< mean time per call through the runtime, slowest rank
};

/// The elements of `element_bytes` of a sweep point of `bytes` for `coll` at `np` ranks: a
/// multiple of np where the collective splits the buffer among the ranks (at least one per rank).
int64_t sweep_count(NcclColl coll, int64_t bytes, int np, int element_bytes = 4);

/// Simulates `coll` (elements of `dtype`, reduced with `op`; broadcast from rank 0) at each
/// size through the runtime (in a forked child): `iters` timed calls after `warmup`, as
/// hvdbench does.
Status simulate_collective_sweep(const ScenarioPoint& pt, int np, NcclColl coll, const std::vector<int64_t>& sizes,
                                 int warmup, int iters, std::vector<CollectivePoint>* out,
                                 DataType dtype = DataType::kFloat32, ReduceOp op = ReduceOp::kSum);

/// simulate_collective_sweep of allreduce.
Status simulate_allreduce_sweep(const ScenarioPoint& pt, int np, const std::vector<int64_t>& sizes,
                                int warmup, int iters, std::vector<CollectivePoint>* out);

}  // namespace hvd::sim
