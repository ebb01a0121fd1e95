#include "collectives/allreduce_direct.h"

#include <algorithm>

namespace hvd {

Status direct_allreduce(CollectiveContext& c, void* buf, int64_t count, DataType dt,
                        ReduceOp op) {
  const PieceBuffer b(buf, count, dtype_size(dt));
  return direct_allreduce(c, b, b, dt, op);
}

Status direct_allreduce(CollectiveContext& c, const PieceBuffer& in, const PieceBuffer& out,
                        DataType dt, ReduceOp op) {
  const int p = c.t.size(), r = c.t.rank();
  const int64_t count = out.count();
  const size_t es = dtype_size(dt);
  if (count == 0) return Status::OK();
  if (p == 1) {
    if (&in != &out) copy_pieces(c, in, out);
    return Status::OK();
  }
  const std::vector<int64_t> off = even_split(count, p);
  const int64_t mine = off[static_cast<size_t>(r) + 1] - off[static_cast<size_t>(r)];
  const int64_t seg = std::max<int64_t>(1, c.segment_bytes / static_cast<int64_t>(es));
  const int64_t longest = off[1] - off[0];  // even_split: the first chunk is the longest
  const size_t slot = static_cast<size_t>(std::min(seg, std::max<int64_t>(mine, 1))) * es;
  if (c.scratch.size() < static_cast<size_t>(p - 1) * slot)
    c.scratch.reserve(static_cast<size_t>(p - 1) * slot);

  // Reduce-scatter, slice by slice: slice [o, o+seg) of every chunk goes to the chunk's
  // owner; this rank reduces its own chunk's slice from every peer (fixed peer order, so
  // the result does not depend on arrival order).
  for (int64_t o = 0; o < longest; o += seg) {
    std::vector<std::unique_ptr<Request>> sends, recvs(static_cast<size_t>(p));
    const int64_t ma = off[static_cast<size_t>(r)] + o;
    const int64_t mb = std::min(ma + seg, off[static_cast<size_t>(r) + 1]);
    for (int k = 1; k < p; ++k) {
      const int q = (r + k) % p;  // staggered so peers do not all start on the same rank
      if (mb > ma)
        recvs[static_cast<size_t>(q)] = c.t.irecv(
            q, offset(c.scratch.data(), static_cast<size_t>(k - 1) * slot),
            static_cast<size_t>(mb - ma) * es, kTagData);
    }
    for (int k = 1; k < p; ++k) {
      const int q = (r + p - k) % p;
      const int64_t a = off[static_cast<size_t>(q)] + o;
      const int64_t b = std::min(a + seg, off[static_cast<size_t>(q) + 1]);
      if (b > a) sends.push_back(c.t.isendv(q, in.range(a, b), kTagData));
    }
    bool first = true;
    for (int k = 1; k < p && mb > ma; ++k) {
      const int q = (r + k) % p;
      HVD_RETURN_IF_ERROR(recvs[static_cast<size_t>(q)]->wait(c.deadline));
      const void* got = offset(c.scratch.data(), static_cast<size_t>(k - 1) * slot);
      out.for_each(ma, mb, [&](void* d, int64_t at, int64_t n) {
        const void* g = offset(got, static_cast<size_t>(at) * es);
        if (!first) return c.dev.reduce(d, g, n, dt, op);
        in.for_each(ma + at, ma + at + n, [&](void* src, int64_t at2, int64_t n2) {
          const size_t b = static_cast<size_t>(at2) * es;
          c.dev.reduce_into(offset(d, b), src, offset(g, b), n2, dt, op);
        });
      });
      first = false;
    }
    HVD_RETURN_IF_ERROR(wait_all(sends, c.deadline));
  }

  // Allgather: the reduced chunk to every peer, every other chunk from its owner.
  std::vector<std::unique_ptr<Request>> reqs;
  for (int k = 1; k < p; ++k) {
    const int q = (r + p - k) % p;
    const int64_t a = off[static_cast<size_t>(q)], b = off[static_cast<size_t>(q) + 1];
    if (b > a) reqs.push_back(c.t.irecvv(q, out.range(a, b), kTagData));
  }
  for (int k = 1; k < p; ++k) {
    const int q = (r + k) % p;
    if (mine > 0)
      reqs.push_back(c.t.isendv(q, out.range(off[static_cast<size_t>(r)], off[static_cast<size_t>(r) + 1]),
                                kTagData));
  }
  return wait_all(reqs, c.deadline);
}

}  // namespace hvd
