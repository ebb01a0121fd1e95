// Bandwidth-optimal ring allreduce (Patarasuk & Yuan; Baidu; Horovod's MPI/NCCL rings).
//
// The buffer is cut into p chunks. Reduce-scatter: in p-1 steps each rank sends one chunk
// to its right neighbour and reduces the chunk arriving from its left one, so after the
// last step rank r holds the fully reduced chunk (r+1) mod p. Allgather: p-1 more steps
// pass the reduced chunks around the ring. Each rank sends 2(p-1)/p of the buffer: the
// lower bound for any allreduce. Large chunks are segmented so receiving segment k+1
// overlaps reducing segment k.
#pragma once

#include "collectives/collective.h"

namespace hvd {

/// In-place allreduce of `count` elements of `buf` over the ring of c.t.
Status ring_allreduce(CollectiveContext& c, void* buf, int64_t count, DataType dt, ReduceOp op);

/// In-place allreduce of a logical buffer spread over several tensors (fusion without a
/// fusion buffer).
Status ring_allreduce(CollectiveContext& c, const PieceBuffer& buf, DataType dt, ReduceOp op);

/// Out-of-place: reduces `in` into `out` (same layout) without copying `in` first: the
/// first reduce-scatter step sends from `in`, every step reduces in (op) received → out.
Status ring_allreduce(CollectiveContext& c, const PieceBuffer& in, const PieceBuffer& out,
                      DataType dt, ReduceOp op);

/// The reduce-scatter half of the ring: afterwards rank r owns chunk (r+1+shift) mod p of
/// the split (chunk offsets in `off`, size p+1) fully reduced in place.
Status ring_reduce_scatter_phase(CollectiveContext& c, const PieceBuffer& buf,
                                 const std::vector<int64_t>& off, DataType dt, ReduceOp op,
                                 int shift = 0, const PieceBuffer* in = nullptr);

/// The allgather half: starting from rank r owning chunk (r+1) mod p, leaves every chunk
/// everywhere.
Status ring_allgather_phase(CollectiveContext& c, const PieceBuffer& buf,
                            const std::vector<int64_t>& off, DataType dt);

}  // namespace hvd
