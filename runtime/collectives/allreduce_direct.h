// Direct allreduce for small groups: a reduce-scatter in which every rank receives its
// chunk from all the others at once, then an allgather in which it sends the reduced chunk
// to all of them at once.
//
// It moves exactly the ring's bytes (each rank sends 2(p-1)/p of the buffer) but in 2
// dependent rounds instead of the ring's 2(p-1) steps. Where a step's cost is dominated by
// waiting for a peer rather than by the wire (ranks that share cores: every ring step
// waits until both neighbours get a core), fewer dependent steps win; on a network of
// single links the ring's one-neighbour traffic wins, so it is meant for one node and a
// few ranks. Large chunks go in slices of the segment size, so scratch holds (p-1)
// slices.
#pragma once

#include "collectives/collective.h"

namespace hvd {

/// Reduces `in` into `out` (same layout; may be the same buffer) over c.t.
Status direct_allreduce(CollectiveContext& c, const PieceBuffer& in, const PieceBuffer& out,
                        DataType dt, ReduceOp op);

/// In-place convenience form.
Status direct_allreduce(CollectiveContext& c, void* buf, int64_t count, DataType dt,
                        ReduceOp op);

}  // namespace hvd
