#include "collectives/allreduce_hierarchical.h"

#include "collectives/allreduce_rhd.h"
#include "collectives/allreduce_ring.h"

namespace hvd {

Status hierarchical_allreduce(CollectiveContext& c, Transport& local, Transport& cross, void* buf,
                              int64_t count, DataType dt, ReduceOp op, bool cross_rhd) {
  if (count == 0) return Status::OK();
  const size_t es = dtype_size(dt);
  const int L = local.size();
  const std::vector<int64_t> off = even_split(count, L);
  CollectiveContext lc{local, c.dev, c.scratch, c.segment_bytes, c.deadline};
  const PieceBuffer whole(buf, count, es);
  HVD_RETURN_IF_ERROR(ring_reduce_scatter_phase(lc, whole, off, dt, op));
  // After the local reduce-scatter this rank owns chunk (local_rank + 1) mod L.
  const int mine = (local.rank() + 1) % L;
  const int64_t n = off[mine + 1] - off[mine];
  CollectiveContext xc{cross, c.dev, c.scratch, c.segment_bytes, c.deadline};
  void* slice = offset(buf, static_cast<size_t>(off[mine]) * es);
  HVD_RETURN_IF_ERROR(cross_rhd ? rhd_allreduce(xc, slice, n, dt, op)
                                : ring_allreduce(xc, slice, n, dt, op));
  return ring_allgather_phase(lc, whole, off, dt);
}

}  // namespace hvd
