#include "collectives/allreduce_ring.h"

namespace hvd {

namespace {
int mod(int a, int p) { return ((a % p) + p) % p; }
}  // namespace

Status ring_reduce_scatter_phase(CollectiveContext& c, void* buf, const std::vector<int64_t>& off,
                                 DataType dt, ReduceOp op, int shift) {
  const int p = c.t.size();
  const int r = c.t.rank();
  const size_t es = dtype_size(dt);
  const int right = mod(r + 1, p);
  const int left = mod(r - 1, p);
  for (int step = 0; step < p - 1; ++step) {
    // Send the chunk we have accumulated longest; receive our left neighbour's.
    const int send_chunk = mod(r - step + shift, p);
    const int recv_chunk = mod(r - step - 1 + shift, p);
    const int64_t sn = off[send_chunk + 1] - off[send_chunk];
    const int64_t rn = off[recv_chunk + 1] - off[recv_chunk];
    Status s = send_recv_reduce(c, right, offset(buf, off[send_chunk] * es), sn * es, left,
                                offset(buf, off[recv_chunk] * es), rn, dt, op);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status ring_allgather_phase(CollectiveContext& c, void* buf, const std::vector<int64_t>& off,
                            DataType dt) {
  const int p = c.t.size();
  const int r = c.t.rank();
  const size_t es = dtype_size(dt);
  const int right = mod(r + 1, p);
  const int left = mod(r - 1, p);
  for (int step = 0; step < p - 1; ++step) {
    // Pass on the reduced chunk received last step (our own at step 0).
    const int send_chunk = mod(r + 1 - step, p);
    const int recv_chunk = mod(r - step, p);
    const int64_t sn = off[send_chunk + 1] - off[send_chunk];
    const int64_t rn = off[recv_chunk + 1] - off[recv_chunk];
    Status s = sendrecv(c.t, right, offset(buf, off[send_chunk] * es), sn * es, left,
                        offset(buf, off[recv_chunk] * es), rn * es, kTagData, c.deadline);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status ring_allreduce(CollectiveContext& c, void* buf, int64_t count, DataType dt, ReduceOp op) {
  const int p = c.t.size();
  if (p == 1 || count == 0) return Status::OK();
  const std::vector<int64_t> off = even_split(count, p);
  Status s = ring_reduce_scatter_phase(c, buf, off, dt, op);
  if (!s.ok()) return s;
  return ring_allgather_phase(c, buf, off, dt);
}

}  // namespace hvd
