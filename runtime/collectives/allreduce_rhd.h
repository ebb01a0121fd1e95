// Recursive halving-doubling allreduce (Rabenseifner): reduce-scatter by recursive halving,
// then allgather by recursive doubling: 2·log2(p) steps instead of the ring's 2(p-1), so it
// wins for small messages where latency dominates. A non-power-of-two world first folds
// the extra ranks into partners, and unfolds them at the end.
#pragma once

#include "collectives/collective.h"

namespace hvd {

/// In-place allreduce of `count` elements of `buf`.
Status rhd_allreduce(CollectiveContext& c, void* buf, int64_t count, DataType dt, ReduceOp op);

/// Out of place over pieces: reads `in`, writes `out` (the same layout). The first step a
/// rank reduces in (the fold, or the first halving step) combines `in` with what arrives
/// straight into `out`, so nothing is copied up front (as ring_allreduce's pieces form).
/// Passing the same object as `in` and `out` reduces in place (what the first overload does).
Status rhd_allreduce(CollectiveContext& c, const PieceBuffer& in, const PieceBuffer& out,
                     DataType dt, ReduceOp op);

}  // namespace hvd
