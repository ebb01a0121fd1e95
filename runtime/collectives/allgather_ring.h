// Ring allgather with a different block size per rank (Horovod's allgatherv): in p-1 steps
// each rank forwards to its right neighbour the block it received last, so every block
// travels once around the ring.
#pragma once

#include "collectives/collective.h"

namespace hvd {

/// `out` holds every rank's block in rank order (block r: bytes[r] bytes at the sum of the
/// earlier sizes); this rank's block must already be in place.
Status ring_allgatherv(CollectiveContext& c, void* out, const std::vector<size_t>& bytes);

/// Hierarchical allgatherv: ring inside each node, then across nodes among the first rank
/// of each node, then a broadcast inside each node. Requires nodes of equal size holding consecutive ranks.
Status hierarchical_allgatherv(CollectiveContext& c, Transport& local, Transport& cross, void* out,
                               const std::vector<size_t>& bytes);

}  // namespace hvd
