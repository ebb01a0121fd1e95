#include "collectives/allreduce_ring_pipelined.h"

#include <algorithm>
#include <deque>

namespace hvd {

namespace {

int mod(int a, int p) { return ((a % p) + p) % p; }

// The pipeline: steps 0..p-2 reduce-scatter, p-1..2p-3 allgather; at step s rank r
// receives chunk recv_chunk(s) from its left neighbour and then sends that same chunk on
// to its right at step s+1. Messages on each (left, right) pair flow in (step, slice)
// order on both sides, which is the order the transport matches them in.
struct Ring {
  int p, r;
  int64_t slices;                 // per chunk (same for every chunk)
  std::vector<int64_t> off;       // chunk offsets (elements), size p+1
  int steps() const { return 2 * (p - 1); }
  int send_chunk(int s) const { return s < p - 1 ? mod(r - s, p) : mod(r + 1 - (s - (p - 1)), p); }
  int recv_chunk(int s) const { return s < p - 1 ? mod(r - s - 1, p) : mod(r - (s - (p - 1)), p); }
  // Elements [first, last) of slice j of chunk k.
  std::pair<int64_t, int64_t> slice(int k, int64_t j) const {
    const int64_t n = off[static_cast<size_t>(k) + 1] - off[static_cast<size_t>(k)];
    const int64_t base = n / slices, extra = n % slices;
    const int64_t a = j * base + std::min(j, extra);
    return {off[static_cast<size_t>(k)] + a, off[static_cast<size_t>(k)] + a + base + (j < extra ? 1 : 0)};
  }
};

}  // namespace

Status pipelined_ring_allreduce(CollectiveContext& c, void* buf, int64_t count, DataType dt,
                                ReduceOp op, int window) {
  const int p = c.t.size();
  if (p == 1 || count == 0) return Status::OK();
  const size_t es = dtype_size(dt);
  Ring ring{p, c.t.rank(), 1, even_split(count, p)};
  const int64_t max_chunk = ring.off[1] - ring.off[0];  // even_split: the first is largest
  const int64_t seg = std::max<int64_t>(1, c.segment_bytes / static_cast<int64_t>(es));
  ring.slices = std::max<int64_t>(1, (max_chunk + seg - 1) / seg);
  window = std::max(1, window);
  const int right = mod(ring.r + 1, p), left = mod(ring.r - 1, p);
  // Receive slots for reduce-scatter slices (allgather slices land in place).
  const size_t slot = static_cast<size_t>((max_chunk + ring.slices - 1) / ring.slices) * es;
  if (c.scratch.size() < slot * static_cast<size_t>(window)) c.scratch.reserve(slot * static_cast<size_t>(window));
  const int64_t total = static_cast<int64_t>(ring.steps()) * ring.slices;  // messages each way
  struct Pending {
    std::unique_ptr<Request> req;
    int64_t index;  // step * slices + slice
    void* into;
  };
  std::deque<Pending> recvs;
  std::deque<std::unique_ptr<Request>> sends;
  int64_t next_recv = 0;
  auto post_recv = [&] {
    const int s = static_cast<int>(next_recv / ring.slices);
    const int64_t j = next_recv % ring.slices;
    const auto [a, b] = ring.slice(ring.recv_chunk(s), j);
    void* into = s < p - 1 ? offset(c.scratch.data(), static_cast<size_t>(next_recv % window) * slot)
                           : offset(buf, static_cast<size_t>(a) * es);
    recvs.push_back({b > a ? c.t.irecv(left, into, static_cast<size_t>(b - a) * es, kTagData) : nullptr,
                     next_recv, into});
    ++next_recv;
  };
  // At most one chunk's slices plus 2 windows of sends in flight: the oldest is waited for
  // first. That cannot deadlock: it needs the right neighbour to have consumed messages
  // ~3 windows older than the ones we are processing, and a cycle of ranks each waiting
  // on its right neighbour that way would have to be behind itself.
  const size_t max_sends = static_cast<size_t>(ring.slices + 2 * window);
  auto send = [&](int s, int64_t j) -> Status {
    while (sends.size() >= max_sends) {
      Status st = sends.front()->wait(c.deadline);
      if (!st.ok()) return st;
      sends.pop_front();
    }
    const auto [a, b] = ring.slice(ring.send_chunk(s), j);
    if (b > a) sends.push_back(c.t.isend(right, offset(buf, static_cast<size_t>(a) * es),
                                         static_cast<size_t>(b - a) * es, kTagData));
    return Status::OK();
  };
  // Step 0 sends our own chunk's slices straight away.
  for (int64_t j = 0; j < ring.slices; ++j) {
    Status st = send(0, j);
    if (!st.ok()) return st;
  }
  while (next_recv < total && next_recv < window) post_recv();
  while (!recvs.empty()) {
    Pending cur = std::move(recvs.front());
    recvs.pop_front();
    if (cur.req) {
      Status st = cur.req->wait(c.deadline);
      if (!st.ok()) return st;
    }
    const int s = static_cast<int>(cur.index / ring.slices);
    const int64_t j = cur.index % ring.slices;
    if (s < p - 1) {  // reduce-scatter: fold the arrived slice into our copy of the chunk
      const auto [a, b] = ring.slice(ring.recv_chunk(s), j);
      if (b > a) c.dev.reduce(offset(buf, static_cast<size_t>(a) * es), cur.into, b - a, dt, op);
    }
    if (next_recv < total) post_recv();  // its slot is free again
    if (s + 1 < ring.steps()) {
      Status st = send(s + 1, j);
      if (!st.ok()) return st;
    }
  }
  Status first;
  for (auto& r : sends) {
    Status st = r->wait(c.deadline);
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

}  // namespace hvd
