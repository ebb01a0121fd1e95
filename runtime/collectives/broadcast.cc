#include "collectives/broadcast.h"

#include <algorithm>

namespace hvd {

Status tree_broadcast(CollectiveContext& c, void* buf, size_t bytes, int root) {
  const int p = c.t.size();
  if (p == 1 || bytes == 0) return Status::OK();
  const int v = (c.t.rank() - root + p) % p;  // rank relative to the root
  int mask = 1;
  // Receive from the parent: the relative rank with our lowest set bit cleared.
  while (mask < p) {
    if (v & mask) {
      int parent = ((v - mask) + root) % p;
      HVD_RETURN_IF_ERROR(recv(c.t, parent, buf, bytes, kTagData, c.deadline));
      break;
    }
    mask <<= 1;
  }
  // Forward to children below that bit, largest subtree first.
  std::vector<std::unique_ptr<Request>> sends;
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (v + mask < p) sends.push_back(c.t.isend((v + mask + root) % p, buf, bytes, kTagData));
  }
  return wait_all(sends, c.deadline);
}

Status pipelined_broadcast(CollectiveContext& c, void* buf, size_t bytes, int root) {
  const int p = c.t.size();
  if (p == 1 || bytes == 0) return Status::OK();
  const int v = (c.t.rank() - root + p) % p;
  const int prev = (c.t.rank() - 1 + p) % p;
  const int next = (c.t.rank() + 1) % p;
  const size_t seg = static_cast<size_t>(std::max<int64_t>(1, c.segment_bytes));
  std::vector<std::unique_ptr<Request>> sends;
  std::unique_ptr<Request> pending;
  if (v > 0) pending = c.t.irecv(prev, buf, std::min(seg, bytes), kTagData);
  for (size_t o = 0; o < bytes; o += seg) {
    const size_t n = std::min(seg, bytes - o);
    if (v > 0) {
      std::unique_ptr<Request> following;
      if (o + seg < bytes)
        following = c.t.irecv(prev, offset(buf, o + seg), std::min(seg, bytes - o - seg), kTagData);
      HVD_RETURN_IF_ERROR(pending->wait(c.deadline));
      pending = std::move(following);
    }
    if (v < p - 1) sends.push_back(c.t.isend(next, offset(buf, o), n, kTagData));
  }
  return wait_all(sends, c.deadline);
}

}  // namespace hvd
