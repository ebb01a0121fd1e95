// The pipelined ring allreduce (collectives/allreduce_ring_pipelined.h) as timing-only
// trains. With phantom buffers a later message of the ring depends on an earlier one only
// through time, so each link's 2(p-1) steps can travel as a few transfers ("trains") of m
// consecutive steps each, where the byte ring sends one message per step: the flows still
// share every link of their routes, and each train accounts for the hops its later
// messages took upstream. Used for rings of single-slice steps long enough that each
// train spans at least 8 steps (shorter trains alias with the period of a server's hops;
// validated against a first-in-first-out ring model in tests/sim/alpha_beta_test.cc).
#include <algorithm>
#include <deque>

#include "collectives/collective.h"
#include "model/seams.h"

namespace hvd::sim {

namespace {

int mod(int64_t a, int p) { return static_cast<int>(((a % p) + p) % p); }

}  // namespace

bool train_ring_allreduce(TrainLinks& links, const RingAllreduce& a, Device& dev, Status* done) {
  Transport& t = links.group();
  const int p = t.size(), r = t.rank();
  if (p == 1 || a.count == 0 || links.transfers() <= 0) return false;
  const size_t es = dtype_size(a.dt);
  const EvenSplit off(a.count, p);
  const int64_t max_chunk = off[1] - off[0];  // even split: the first is largest
  const int64_t seg = std::max<int64_t>(1, a.segment_bytes / static_cast<int64_t>(es));
  const int64_t slices = a.lockstep ? 1 : std::max<int64_t>(1, (max_chunk + seg - 1) / seg);
  if (slices != 1) return false;
  // Message i is step i (one slice per step): at step i rank r receives chunk r-i-1 and
  // sends chunk r-i (mod p), in both phases. A transfer carries m consecutive steps.
  const int64_t total = 2 * static_cast<int64_t>(p - 1);
  const int64_t want = links.transfers();
  const int64_t m = (total + want - 1) / want;
  if (m < 8) return false;
  const int64_t units = (total + m - 1) / m;
  const int right = mod(r + 1, p), left = mod(r - 1, p);
  // Elements of the chunks from, from-1, ... (n of them, mod p): a train's bytes are such a
  // contiguous run of chunks.
  auto chunk_run = [&](int64_t from_chunk, int64_t n) {
    const int64_t laps = n / p, rest = n % p;
    const int64_t lo = mod((from_chunk - rest + 1) % p, p), hi = lo + rest;
    int64_t e = laps * a.count;
    e += hi <= p ? off[static_cast<size_t>(hi)] - off[static_cast<size_t>(lo)]
                 : a.count - off[static_cast<size_t>(lo)] + off[static_cast<size_t>(hi - p)];
    return e;
  };
  const size_t hop_bytes = static_cast<size_t>(max_chunk) * es;
  // Bytes of train u and, for an incoming one, the time from its start until its last
  // message is in. The message of step s reaches rank r one hop after step s-1 reached
  // r-1, so a train's later messages became ready at the sender one by one, each a hop
  // upstream later: its last message (step sL) arrives at r  sum_{s0 < s <= sL} hop(r - s)
  // + hop(r) after its first left (hop(x): one message over the hop into rank x).
  auto unit_size = [&](int64_t u, bool incoming, size_t* bytes) {
    const int64_t first = u * m, last = std::min(total, u * m + m);
    *bytes = static_cast<size_t>(chunk_run(r - first - (incoming ? 1 : 0), last - first)) * es;
    if (!incoming || !*bytes) return 0.0;
    // Lockstep: every step of the train takes the ring's slowest hop.
    if (a.lockstep) return static_cast<double>(last - first) * links.ring_max_hop(hop_bytes);
    // Hops into ranks r-first-1 down to r-last+1, then our own.
    return links.ring_hops(mod(r - (last - 1), p), last - 1 - first, hop_bytes) + links.ring_hops(r, 1, hop_bytes);
  };
  // Trains on one link: at most two in flight (the next one's latency overlaps the
  // previous one's bytes, as messages on one connection do, without many parallel flows).
  const int64_t window = a.lockstep ? 1 : 2;
  struct Pending {
    std::unique_ptr<Request> req;
    int64_t unit;
  };
  std::deque<Pending> recvs;
  std::deque<std::unique_ptr<Request>> sends;
  int64_t next_recv = 0, next_send = 0;  // trains
  auto post_recv = [&] {
    size_t bytes = 0;
    const double path = unit_size(next_recv, true, &bytes);
    recvs.push_back({bytes ? links.irecv_train(left, bytes, path, kTagData) : nullptr, next_recv});
    ++next_recv;
  };
  // A train goes once the train before it has arrived (a ring of `units` steps, each m
  // times as long); the first at once. Sends in flight as in the byte ring.
  const size_t max_sends = a.lockstep ? 1 : static_cast<size_t>(1 + 2 * window);
  auto send_ready = [&](int64_t arrived_units) -> Status {
    for (; next_send < std::min(units, arrived_units + 1); ++next_send) {
      while (sends.size() >= max_sends) {
        HVD_RETURN_IF_ERROR(sends.front()->wait(a.deadline));
        sends.pop_front();
      }
      size_t bytes = 0;
      unit_size(next_send, false, &bytes);
      if (bytes) sends.push_back(links.isend_train(right, bytes, kTagData));
    }
    return Status::OK();
  };
  auto run = [&]() -> Status {
    // Lockstep waits for each send before the next: the receives must be posted first.
    if (a.lockstep)
      while (next_recv < units && next_recv < window) post_recv();
    HVD_RETURN_IF_ERROR(send_ready(0));
    while (next_recv < units && next_recv < window) post_recv();
    while (!recvs.empty()) {
      Pending cur = std::move(recvs.front());
      recvs.pop_front();
      if (cur.req) HVD_RETURN_IF_ERROR(cur.req->wait(a.deadline));
      // The train's reduce-scatter steps first..rs_end-1 brought chunks r-first-1 downwards.
      const int64_t first = cur.unit * m, last = std::min(total, first + m);
      const int64_t rs_end = std::min<int64_t>(last, p - 1);
      const int64_t elems = rs_end > first ? chunk_run(r - first - 1, rs_end - first) : 0;
      if (elems) dev.reduce(a.buf, nullptr, elems, a.dt, a.op);  // timing only: no bytes
      if (next_recv < units) post_recv();
      HVD_RETURN_IF_ERROR(send_ready(cur.unit + 1));
    }
    return wait_all(sends, a.deadline);
  };
  *done = run();
  return true;
}

}  // namespace hvd::sim
