// Hierarchical allreduce (Horovod's HOROVOD_HIERARCHICAL_ALLREDUCE): reduce-scatter inside
// the node over its fast links, allreduce each rank's slice across nodes among ranks with
// the same local rank (L parallel rings, each carrying 1/L of the data), then allgather
// inside the node. The network carries 2(N-1)/N of the buffer once per node, not per GPU.
#pragma once

#include "collectives/collective.h"

namespace hvd {

/// In-place allreduce using the node group `local` and the cross-node group `cross`.
Status hierarchical_allreduce(CollectiveContext& c, Transport& local, Transport& cross, void* buf,
                              int64_t count, DataType dt, ReduceOp op, bool cross_rhd);

}  // namespace hvd
