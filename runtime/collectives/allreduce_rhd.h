// Recursive halving-doubling allreduce (Rabenseifner): reduce-scatter by recursive halving,
// then allgather by recursive doubling: 2·log2(p) steps instead of the ring's 2(p-1), so it
// wins for small messages where latency dominates. A non-power-of-two world first folds
// the extra ranks into partners, and unfolds them at the end.
#pragma once

#include "collectives/collective.h"

namespace hvd {

/// In-place allreduce of `count` elements of `buf`.
Status rhd_allreduce(CollectiveContext& c, void* buf, int64_t count, DataType dt, ReduceOp op);

}  // namespace hvd
