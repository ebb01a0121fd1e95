#include "collectives/reducescatter_ring.h"

#include "collectives/allreduce_ring.h"

namespace hvd {

Status ring_reducescatter(CollectiveContext& c, void* work, const std::vector<int64_t>& off,
                          DataType dt, ReduceOp op) {
  if (c.t.size() == 1) return Status::OK();
  // A shift of -1 makes the last chunk each rank reduces its own block.
  return ring_reduce_scatter_phase(c, PieceBuffer(work, off.back(), dtype_size(dt)), off, dt, op, -1);
}

}  // namespace hvd
