// Broadcast: a binomial tree for small messages (log2(p) rounds, each holder doubles),
// and a pipelined chain for large ones (root → root+1 → ..., cut into segments so every
// link is busy at once: time ≈ (p-2+k) · segment instead of log2(p) · whole message).
#pragma once

#include "collectives/collective.h"

namespace hvd {

/// Binomial-tree broadcast of `bytes` bytes of `buf` from `root`.
Status tree_broadcast(CollectiveContext& c, void* buf, size_t bytes, int root);

/// Pipelined chain broadcast of `bytes` bytes of `buf` from `root`.
Status pipelined_broadcast(CollectiveContext& c, void* buf, size_t bytes, int root);

}  // namespace hvd
