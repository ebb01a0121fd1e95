// NCCL-style pipelined ring allreduce.
//
// The same ring as allreduce_ring.h (reduce-scatter, then allgather, 2(p-1) steps, each
// rank sending 2(p-1)/p of the buffer), but every chunk is cut into slices of at most
// `segment_bytes`, and a slice moves on to the next step as soon as it has arrived and
// been reduced -- it does not wait for the rest of its chunk. Slice j of step s+1 then
// travels while slice j+1 of step s is still arriving, so for buffers of several slices
// per chunk the per-step latency overlaps the data instead of adding to it, as in NCCL's
// rings (chunks of NCCL_STEPS slots in flight). With one slice per chunk it is exactly
// the step-by-step ring.
#pragma once

#include "collectives/collective.h"

namespace hvd {

/// In-place allreduce of `count` elements of `buf` over the ring of c.t, slices of at most
/// c.segment_bytes, at most `window` slices received ahead per rank.
///
/// `lockstep`: the step-synchronous form of the same ring. A rank's next message goes only
/// once its previous one has been received (one send in flight, one receive posted ahead),
/// so the ring advances step by step at the pace of its slowest hop, as a ring whose every
/// step is staged whole before it moves on (allreduce_algorithm "lockstep_ring").
///
/// Where the transport has timing-only collectives (Transport::timing(), the simulator
/// without bytes) they may time the whole ring instead, as a few long transfers.
Status pipelined_ring_allreduce(CollectiveContext& c, void* buf, int64_t count, DataType dt,
                                ReduceOp op, int window = 4, bool lockstep = false);

}  // namespace hvd
