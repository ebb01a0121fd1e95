// Ring reducescatter: the first half of the ring allreduce, arranged so that rank r ends
// up owning block r (Horovod splits the first dimension as evenly as possible, the first
// ranks taking one extra row).
#pragma once

#include "collectives/collective.h"

namespace hvd {

/// Reduces `work` (all blocks, modified in place) across ranks; afterwards block r
/// (elements off[r] .. off[r+1]) of `work` is fully reduced on rank r.
Status ring_reducescatter(CollectiveContext& c, void* work, const std::vector<int64_t>& off,
                          DataType dt, ReduceOp op);

}  // namespace hvd
