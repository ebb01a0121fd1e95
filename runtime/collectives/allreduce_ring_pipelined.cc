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
  EvenSplit off;                  // chunk offsets (elements), 0 .. p
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
                                ReduceOp op, int window, bool lockstep) {
  const int p = c.t.size();
  if (p == 1 || count == 0) return Status::OK();
  const size_t es = dtype_size(dt);
  Ring ring{p, c.t.rank(), 1, EvenSplit(count, p)};
  const int64_t max_chunk = ring.off[1] - ring.off[0];  // even_split: the first is largest
  const int64_t seg = std::max<int64_t>(1, c.segment_bytes / static_cast<int64_t>(es));
  // Lockstep moves each step whole (one message per step: a step is staged before it goes on).
  ring.slices = lockstep ? 1 : std::max<int64_t>(1, (max_chunk + seg - 1) / seg);
  window = std::max(1, window);
  const int right = mod(ring.r + 1, p), left = mod(ring.r - 1, p);
  const int64_t total = static_cast<int64_t>(ring.steps()) * ring.slices;  // messages each way
  // Message i = (step i / slices, slice i % slices). A transfer carries `m` consecutive
  // messages: 1 with real bytes; in a timing-only world (Transport::timing(): trains) up
  // to `m` at once, so the sequence travels as at most that many transfers per link.
  // Trains only for rings of single-slice steps long enough that each train spans at least
  // 8 steps (shorter trains alias with the period of a server's hops; validated against a
  // first-in-first-out ring model in tests/sim/alpha_beta_test.cc).
  TimingTrains* const trains = c.t.timing();  // non-null whenever m > 1 below
  const int64_t want = trains ? trains->transfers() : 0;
  int64_t m = want > 0 && ring.slices == 1 ? (total + want - 1) / want : 1;
  if (m < 8) m = 1;
  const int64_t units = (total + m - 1) / m;
  // Trains on one link: at most two in flight (the next one's latency overlaps the
  // previous one's bytes, as messages on one connection do, without many parallel flows).
  if (m > 1) window = 2;
  if (lockstep) window = 1;
  auto msg_elems = [&](int64_t i, bool incoming) {
    const int s = static_cast<int>(i / ring.slices);
    return ring.slice(incoming ? ring.recv_chunk(s) : ring.send_chunk(s), i % ring.slices);
  };
  // Receive slots for reduce-scatter slices (allgather slices land in place).
  const size_t slot = static_cast<size_t>((max_chunk + ring.slices - 1) / ring.slices) * es;
  if (m == 1 && c.scratch.size() < slot * static_cast<size_t>(window))
    c.scratch.reserve(slot * static_cast<size_t>(window));
  struct Pending {
    std::unique_ptr<Request> req;
    int64_t unit;
    void* into;
  };
  std::deque<Pending> recvs;
  std::deque<std::unique_ptr<Request>> sends;
  int64_t next_recv = 0;  // unit
  int64_t next_send = 0;  // unit
  // Trains: the message of step s reaches rank r one hop after step s-1 reached r-1, so a
  // train's later messages became ready at the sender one by one, each a hop upstream
  // later: its last message (step sL) arrives at r  sum_{s0 < s <= sL} hop(r - s) + hop(r)
  // after its first left (hop(x): one message over the hop into rank x; the transport sums
  // contiguous ring hops in O(1)). With one slice per step (the only case trains are used)
  // message i is step i, and rank r receives chunk r-i-1 and sends chunk r-i (mod p) at
  // step i in both phases, so a train's bytes are a contiguous run of chunks.
  auto chunk_run = [&](int64_t from_chunk, int64_t n) {  // elements of chunks from, from-1, ...
    const int64_t laps = n / p, rest = n % p;
    const int64_t lo = mod(static_cast<int>((from_chunk - rest + 1) % p), p), hi = lo + rest;
    int64_t e = laps * count;
    e += hi <= p ? ring.off[static_cast<size_t>(hi)] - ring.off[static_cast<size_t>(lo)]
                 : count - ring.off[static_cast<size_t>(lo)] + ring.off[static_cast<size_t>(hi - p)];
    return e;
  };
  const size_t hop_bytes = static_cast<size_t>(max_chunk) * es;
  // Bytes of unit u (messages without elements are not sent) and, for an incoming train,
  // the time from its start until its last message is in.
  auto unit_size = [&](int64_t u, bool incoming, size_t* bytes) {
    const int64_t first = u * m, last = std::min(total, u * m + m);
    if (m > 1) {
      *bytes = static_cast<size_t>(chunk_run(ring.r - first - (incoming ? 1 : 0), last - first)) * es;
      if (!incoming || !*bytes) return 0.0;
      // Lockstep: every step of the train takes the ring's slowest hop.
      if (lockstep) return static_cast<double>(last - first) * trains->ring_max_hop(hop_bytes);
      // Hops into ranks r-first-1 down to r-last+1, then our own.
      return trains->ring_hops(mod(static_cast<int>((ring.r - (last - 1)) % p), p), last - 1 - first, hop_bytes) +
             trains->ring_hops(ring.r, 1, hop_bytes);
    }
    const auto [a, b] = msg_elems(first, incoming);
    *bytes = b > a ? static_cast<size_t>(b - a) * es : 0;
    return 0.0;
  };
  auto post_recv = [&] {
    if (m == 1) {
      const int s = static_cast<int>(next_recv / ring.slices);
      const auto [a, b] = msg_elems(next_recv, true);
      void* into = s < p - 1 ? offset(c.scratch.data(), static_cast<size_t>(next_recv % window) * slot)
                             : offset(buf, static_cast<size_t>(a) * es);
      recvs.push_back({b > a ? c.t.irecv(left, into, static_cast<size_t>(b - a) * es, kTagData) : nullptr,
                       next_recv, into});
    } else {
      size_t bytes = 0;
      const double path = unit_size(next_recv, true, &bytes);
      recvs.push_back({bytes ? trains->irecv_train(left, bytes, path, kTagData) : nullptr, next_recv, nullptr});
    }
    ++next_recv;
  };
  // At most one chunk's slices plus 2 windows of sends in flight: the oldest is waited for
  // first. That cannot deadlock: it needs the right neighbour to have consumed messages
  // ~3 windows older than the ones we are processing, and a cycle of ranks each waiting
  // on its right neighbour that way would have to be behind itself.
  const size_t max_sends = lockstep ? 1 : static_cast<size_t>((ring.slices + m - 1) / m + 2 * window);
  // Message i can go once message i - slices has arrived (and been reduced); the first
  // `slices` (our own chunk) at once. A transfer goes once the transfer `lag` before it
  // has arrived: for single messages lag = slices exactly; a train that carries later
  // steps goes one hop per transfer, like a ring of `units` steps each m times as long.
  const int64_t lag = (ring.slices + m - 1) / m;
  auto send_ready = [&](int64_t arrived_units) -> Status {
    for (; next_send < std::min(units, arrived_units + lag); ++next_send) {
      while (sends.size() >= max_sends) {
        HVD_RETURN_IF_ERROR(sends.front()->wait(c.deadline));
        sends.pop_front();
      }
      if (m == 1) {
        const auto [a, b] = msg_elems(next_send, false);
        if (b > a)
          sends.push_back(c.t.isend(right, offset(buf, static_cast<size_t>(a) * es),
                                    static_cast<size_t>(b - a) * es, kTagData));
      } else {
        size_t bytes = 0;
        unit_size(next_send, false, &bytes);
        if (bytes) sends.push_back(trains->isend_train(right, bytes, kTagData));
      }
    }
    return Status::OK();
  };
  // Lockstep waits for each send before the next: the receives must be posted first, or
  // every rank would wait on a neighbour that has not posted its receive yet.
  if (lockstep)
    while (next_recv < units && next_recv < window) post_recv();
  HVD_RETURN_IF_ERROR(send_ready(0));
  while (next_recv < units && next_recv < window) post_recv();
  while (!recvs.empty()) {
    Pending cur = std::move(recvs.front());
    recvs.pop_front();
    if (cur.req) HVD_RETURN_IF_ERROR(cur.req->wait(c.deadline));
    const int64_t last = std::min(total, cur.unit * m + m);
    // Reduce-scatter messages: fold what arrived into our copy of the chunk.
    if (m == 1) {
      const int s = static_cast<int>(cur.unit / ring.slices);
      const auto [a, b] = msg_elems(cur.unit, true);
      if (s < p - 1 && b > a) c.dev.reduce(offset(buf, static_cast<size_t>(a) * es), cur.into, b - a, dt, op);
    } else {
      // The train's reduce-scatter steps first..rs_end-1 brought chunks r-first-1 downwards.
      const int64_t first = cur.unit * m, rs_end = std::min<int64_t>(last, p - 1);
      const int64_t elems = rs_end > first ? chunk_run(ring.r - first - 1, rs_end - first) : 0;
      if (elems) c.dev.reduce(buf, nullptr, elems, dt, op);  // timing only: no bytes
    }
    if (next_recv < units) post_recv();  // its slot is free again
    HVD_RETURN_IF_ERROR(send_ready(cur.unit + 1));
  }
  Status first;
  for (auto& r : sends) {
    const Status st = r->wait(c.deadline);
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

}  // namespace hvd
