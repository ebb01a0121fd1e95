#include "collectives/collective.h"

#include <algorithm>

namespace hvd {

std::vector<int64_t> even_split(int64_t count, int parts) {
  std::vector<int64_t> off(static_cast<size_t>(parts) + 1, 0);
  int64_t base = count / parts;
  int64_t extra = count % parts;
  for (int i = 0; i < parts; ++i) off[i + 1] = off[i] + base + (i < extra ? 1 : 0);
  return off;
}

void copy_pieces(CollectiveContext& c, const PieceBuffer& in, const PieceBuffer& out) {
  const size_t es = out.esize();
  out.for_each(0, out.count(), [&](void* d, int64_t o, int64_t n) {
    in.for_each(o, o + n, [&](void* s, int64_t o2, int64_t n2) {
      c.dev.copy(offset(d, static_cast<size_t>(o2) * es), s, static_cast<size_t>(n2) * es);
    });
  });
}

Status send_recv_reduce(CollectiveContext& c, int to, const void* src, size_t sbytes, int from,
                        void* dst, int64_t rcount, DataType dt, ReduceOp op) {
  const size_t es = dtype_size(dt);
  const int64_t scount = static_cast<int64_t>(sbytes / es);
  PieceBuffer s(const_cast<void*>(src), scount, es), d(dst, rcount, es);
  return send_recv_reduce(c, to, s, 0, scount, from, d, 0, rcount, dt, op);
}

Status send_recv_reduce(CollectiveContext& c, int to, const PieceBuffer& src, int64_t sa,
                        int64_t sb, int from, const PieceBuffer& dst, int64_t da, int64_t db,
                        DataType dt, ReduceOp op, const PieceBuffer* own) {
  const size_t es = dtype_size(dt);
  const int64_t seg = std::max<int64_t>(1, c.segment_bytes / static_cast<int64_t>(es));
  std::vector<std::unique_ptr<Request>> sends;
  // The sender segments exactly like the receiver so message boundaries match.
  for (int64_t o = sa; o < sb; o += seg)
    sends.push_back(c.t.isendv(to, src.range(o, std::min(o + seg, sb)), kTagData));
  const int64_t rcount = db - da;
  // Do our own input and the destination share memory anywhere (an in-place tensor among
  // out-of-place ones)? Then a segment may not land in place before it is reduced.
  bool aliased = false;
  if (own && rcount > 0)
    dst.for_each(da, db, [&](void* p, int64_t off, int64_t k) {
      own->for_each(da + off, da + off + k, [&](void* q, int64_t off2, int64_t k2) {
        const char* d0 = static_cast<const char*>(p) + static_cast<size_t>(off2) * es;
        const char* q0 = static_cast<const char*>(q);
        const size_t len = static_cast<size_t>(k2) * es;
        if (d0 < q0 + len && q0 < d0 + len) aliased = true;
      });
    });
  if (own && !aliased) {
    // Out of place: each segment lands where its result goes and is reduced there with
    // our own input (dst = received (op) own; every op is commutative, bit for bit). No
    // staging slots: the reduce finds the segment in cache, just written by the receive,
    // and the output lines are not fetched a second time.
    std::unique_ptr<Request> pending;
    if (rcount > 0) pending = c.t.irecvv(from, dst.range(da, da + std::min(seg, rcount)), kTagData);
    for (int64_t o = 0; o < rcount; o += seg) {
      const int64_t n = std::min(seg, rcount - o);
      std::unique_ptr<Request> next;
      if (o + seg < rcount)
        next = c.t.irecvv(from, dst.range(da + o + seg, da + o + seg + std::min(seg, rcount - o - seg)),
                          kTagData);
      HVD_RETURN_IF_ERROR(pending->wait(c.deadline));
      dst.for_each(da + o, da + o + n, [&](void* p, int64_t off, int64_t k) {
        const int64_t at = da + o + off;
        own->for_each(at, at + k, [&](void* q, int64_t off2, int64_t k2) {
          c.dev.reduce(offset(p, static_cast<size_t>(off2) * es), q, k2, dt, op);
        });
      });
      pending = std::move(next);
    }
    return wait_all(sends, c.deadline);
  }
  const size_t slot = static_cast<size_t>(std::min(seg, rcount)) * es;
  if (c.scratch.size() < 2 * slot) c.scratch.reserve(2 * slot);
  void* slots[2] = {c.scratch.data(), offset(c.scratch.data(), slot)};
  std::unique_ptr<Request> pending;
  if (rcount > 0)
    pending = c.t.irecv(from, slots[0], static_cast<size_t>(std::min(seg, rcount)) * es, kTagData);
  int cur = 0;
  for (int64_t o = 0; o < rcount; o += seg) {
    const int64_t n = std::min(seg, rcount - o);
    std::unique_ptr<Request> next;
    if (o + seg < rcount) {
      const int64_t nn = std::min(seg, rcount - o - seg);
      next = c.t.irecv(from, slots[1 - cur], static_cast<size_t>(nn) * es, kTagData);
    }
    HVD_RETURN_IF_ERROR(pending->wait(c.deadline));
    // Reduce the received segment into however many pieces it spans.
    dst.for_each(da + o, da + o + n, [&](void* p, int64_t off, int64_t k) {
      const void* got = offset(slots[cur], static_cast<size_t>(off) * es);
      if (!own) return c.dev.reduce(p, got, k, dt, op);
      const int64_t at = da + o + off;
      own->for_each(at, at + k, [&](void* q, int64_t off2, int64_t k2) {
        const size_t b = static_cast<size_t>(off2) * es;
        c.dev.reduce_into(offset(p, b), q, offset(got, b), k2, dt, op);
      });
    });
    pending = std::move(next);
    cur = 1 - cur;
  }
  return wait_all(sends, c.deadline);
}

}  // namespace hvd
