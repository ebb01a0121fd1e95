#include "collectives/allreduce_ring_pipelined.h"

#include <algorithm>
#include <deque>

namespace hvd {

namespace {

int mod(int a, int p) { return ((a % p) + p) % p; }

}  // namespace

Status pipelined_ring_allreduce(CollectiveContext& c, void* buf, int64_t count, DataType dt,
                                ReduceOp op, int window, bool lockstep) {
  const int p = c.t.size(), r = c.t.rank();
  if (p == 1 || count == 0) return Status::OK();
  // A timing-only world (the simulator without bytes) may time the whole ring as trains.
  if (TimingCollectives* timing = c.t.timing()) {
    Status done;
    if (timing->ring_allreduce({buf, count, dt, op, c.segment_bytes, lockstep, c.deadline}, c.dev, &done))
      return done;
  }
  const size_t es = dtype_size(dt);
  const EvenSplit off(count, p);  // chunk k is elements [off[k], off[k+1])
  const int64_t max_chunk = off[1] - off[0];
  const int64_t seg = std::max<int64_t>(1, c.segment_bytes / static_cast<int64_t>(es));
  // Each chunk goes in `slices` slices (lockstep: a step goes whole, staged before it moves on).
  const int64_t slices = lockstep ? 1 : std::max<int64_t>(1, (max_chunk + seg - 1) / seg);
  window = lockstep ? 1 : std::max(1, window);
  const int right = mod(r + 1, p), left = mod(r - 1, p);
  // Steps 0..p-2 reduce-scatter, p-1..2p-3 allgather. At step s rank r receives chunk
  // recv_chunk(s) from its left and sends send_chunk(s) to its right, which is the chunk it
  // received at step s-1. Message i is slice i % slices of step i / slices; messages on a
  // link flow in that order on both sides, the order the transport matches them in.
  const int64_t total = 2 * static_cast<int64_t>(p - 1) * slices;
  auto send_chunk = [&](int s) { return s < p - 1 ? mod(r - s, p) : mod(r + 1 - (s - (p - 1)), p); };
  auto recv_chunk = [&](int s) { return s < p - 1 ? mod(r - s - 1, p) : mod(r - (s - (p - 1)), p); };
  auto elems = [&](int64_t i, bool incoming) -> std::pair<int64_t, int64_t> {  // [first, last)
    const int s = static_cast<int>(i / slices);
    const size_t k = static_cast<size_t>(incoming ? recv_chunk(s) : send_chunk(s));
    const int64_t j = i % slices, n = off[k + 1] - off[k], base = n / slices, extra = n % slices;
    const int64_t first = off[k] + j * base + std::min(j, extra);
    return {first, first + base + (j < extra ? 1 : 0)};
  };
  // Reduce-scatter slices land in `window` receive slots; allgather slices land in place.
  const size_t slot = static_cast<size_t>((max_chunk + slices - 1) / slices) * es;
  if (c.scratch.size() < slot * static_cast<size_t>(window)) c.scratch.reserve(slot * static_cast<size_t>(window));
  struct Pending {
    std::unique_ptr<Request> req;
    int64_t msg;
    void* into;
  };
  std::deque<Pending> recvs;
  std::deque<std::unique_ptr<Request>> sends;
  int64_t next_recv = 0, next_send = 0;
  auto post_recv = [&] {
    const auto [a, b] = elems(next_recv, true);
    void* into = next_recv / slices < p - 1 ? offset(c.scratch.data(), static_cast<size_t>(next_recv % window) * slot)
                                            : offset(buf, static_cast<size_t>(a) * es);
    recvs.push_back({b > a ? c.t.irecv(left, into, static_cast<size_t>(b - a) * es, kTagData) : nullptr, next_recv, into});
    ++next_recv;
  };
  // Message i goes once message i - slices has arrived and been reduced (our own chunk's
  // slices at once). At most a chunk's slices plus two windows of sends are in flight, the
  // oldest waited for first: a cycle of ranks each waiting on its right neighbour that way
  // would have to be behind itself, so it cannot deadlock.
  const size_t max_sends = lockstep ? 1 : static_cast<size_t>(slices + 2 * window);
  auto send_ready = [&](int64_t arrived) -> Status {
    for (; next_send < std::min(total, arrived + slices); ++next_send) {
      while (sends.size() >= max_sends) {
        HVD_RETURN_IF_ERROR(sends.front()->wait(c.deadline));
        sends.pop_front();
      }
      const auto [a, b] = elems(next_send, false);
      if (b > a) sends.push_back(c.t.isend(right, offset(buf, static_cast<size_t>(a) * es), static_cast<size_t>(b - a) * es, kTagData));
    }
    return Status::OK();
  };
  // Lockstep waits for each send before the next: its receive must be posted first.
  if (lockstep) post_recv();
  HVD_RETURN_IF_ERROR(send_ready(0));
  while (next_recv < total && next_recv < window) post_recv();
  while (!recvs.empty()) {
    Pending cur = std::move(recvs.front());
    recvs.pop_front();
    if (cur.req) HVD_RETURN_IF_ERROR(cur.req->wait(c.deadline));
    const auto [a, b] = elems(cur.msg, true);  // reduce-scatter: fold it into our chunk
    if (cur.msg / slices < p - 1 && b > a) c.dev.reduce(offset(buf, static_cast<size_t>(a) * es), cur.into, b - a, dt, op);
    if (next_recv < total) post_recv();  // its slot is free again
    HVD_RETURN_IF_ERROR(send_ready(cur.msg + 1));
  }
  return wait_all(sends, c.deadline);
}

}  // namespace hvd
