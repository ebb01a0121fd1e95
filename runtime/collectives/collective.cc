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

Status wait_all(std::vector<std::unique_ptr<Request>>& reqs, double deadline) {
  Status first;
  for (auto& r : reqs) {
    Status s = r->wait(deadline);
    if (!s.ok() && first.ok()) first = s;
  }
  reqs.clear();
  return first;
}

Status send_recv_reduce(CollectiveContext& c, int to, const void* src, size_t sbytes, int from,
                        void* dst, int64_t rcount, DataType dt, ReduceOp op) {
  const size_t esize = dtype_size(dt);
  const int64_t seg = std::max<int64_t>(1, c.segment_bytes / static_cast<int64_t>(esize));
  std::vector<std::unique_ptr<Request>> sends;
  // The sender segments exactly like the receiver so message boundaries match.
  const int64_t scount = static_cast<int64_t>(sbytes / esize);
  for (int64_t o = 0; o < scount; o += seg) {
    int64_t n = std::min(seg, scount - o);
    sends.push_back(c.t.isend(to, offset(src, o * esize), n * esize, kTagData));
  }
  const size_t slot = static_cast<size_t>(std::min(seg, rcount)) * esize;
  if (c.scratch.size() < 2 * slot) c.scratch.reserve(2 * slot);
  void* slots[2] = {c.scratch.data(), offset(c.scratch.data(), slot)};
  std::unique_ptr<Request> pending;
  if (rcount > 0)
    pending = c.t.irecv(from, slots[0], static_cast<size_t>(std::min(seg, rcount)) * esize, kTagData);
  int cur = 0;
  for (int64_t o = 0; o < rcount; o += seg) {
    int64_t n = std::min(seg, rcount - o);
    std::unique_ptr<Request> next;
    if (o + seg < rcount) {
      int64_t nn = std::min(seg, rcount - o - seg);
      next = c.t.irecv(from, slots[1 - cur], static_cast<size_t>(nn) * esize, kTagData);
    }
    Status s = pending->wait(c.deadline);
    if (!s.ok()) return s;
    c.dev.reduce(offset(dst, o * esize), slots[cur], n, dt, op);
    pending = std::move(next);
    cur = 1 - cur;
  }
  return wait_all(sends, c.deadline);
}

}  // namespace hvd
