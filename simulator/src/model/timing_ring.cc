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

// One rank's train ring. Message i is step i (one slice per step): at step i rank r
// receives chunk r-i-1 and sends chunk r-i (mod p), in both phases. A train carries m
// consecutive steps; there are `units` of them each way.
class TrainRing {
 public:
  TrainRing(TrainLinks& links, const RingAllreduce& a, Device& dev, int64_t m)
      : links_(links), a_(a), dev_(dev), p_(links.group().size()), r_(links.group().rank()),
        es_(dtype_size(a.dt)), off_(a.count, p_), total_(2 * static_cast<int64_t>(p_ - 1)), m_(m),
        units_((total_ + m - 1) / m), hop_bytes_(static_cast<size_t>(off_[1] - off_[0]) * es_),
        window_(a.lockstep ? 1 : 2), max_sends_(a.lockstep ? 1 : static_cast<size_t>(1 + 2 * window_)) {}

  Status run() {
    // Lockstep waits for each send before the next: the receives must be posted first.
    if (a_.lockstep)
      while (next_recv_ < units_ && next_recv_ < window_) post_recv();
    HVD_RETURN_IF_ERROR(send_ready(0));
    while (next_recv_ < units_ && next_recv_ < window_) post_recv();
    while (!recvs_.empty()) {
      Pending cur = std::move(recvs_.front());
      recvs_.pop_front();
      if (cur.req) HVD_RETURN_IF_ERROR(cur.req->wait(a_.deadline));
      // The train's reduce-scatter steps first..rs_end-1 brought chunks r-first-1 downwards.
      const int64_t first = cur.unit * m_, last = std::min(total_, first + m_);
      const int64_t rs_end = std::min<int64_t>(last, p_ - 1);
      const int64_t elems = rs_end > first ? chunk_run(r_ - first - 1, rs_end - first) : 0;
      if (elems) dev_.reduce(a_.buf, nullptr, elems, a_.dt, a_.op);  // timing only: no bytes
      if (next_recv_ < units_) post_recv();
      HVD_RETURN_IF_ERROR(send_ready(cur.unit + 1));
    }
    return wait_all(sends_, a_.deadline);
  }

 private:
  struct Pending {
    std::unique_ptr<Request> req;
    int64_t unit;
  };

  // Elements of the chunks from, from-1, ... (n of them, mod p): a train's bytes are such a
  // contiguous run of chunks.
  int64_t chunk_run(int64_t from_chunk, int64_t n) const {
    const int64_t laps = n / p_, rest = n % p_;
    const int64_t lo = mod((from_chunk - rest + 1) % p_, p_), hi = lo + rest;
    int64_t e = laps * a_.count;
    e += hi <= p_ ? off_[static_cast<size_t>(hi)] - off_[static_cast<size_t>(lo)]
                  : a_.count - off_[static_cast<size_t>(lo)] + off_[static_cast<size_t>(hi - p_)];
    return e;
  }

  // Bytes of train u and, for an incoming one, the time from its start until its last
  // message is in. The message of step s reaches rank r one hop after step s-1 reached
  // r-1, so a train's later messages became ready at the sender one by one, each a hop
  // upstream later: its last message (step sL) arrives at r  sum_{s0 < s <= sL} hop(r - s)
  // + hop(r) after its first left (hop(x): one message over the hop into rank x).
  double unit_size(int64_t u, bool incoming, size_t* bytes) {
    const int64_t first = u * m_, last = std::min(total_, u * m_ + m_);
    *bytes = static_cast<size_t>(chunk_run(r_ - first - (incoming ? 1 : 0), last - first)) * es_;
    if (!incoming || !*bytes) return 0.0;
    // Lockstep: every step of the train takes the ring's slowest hop.
    if (a_.lockstep) return static_cast<double>(last - first) * links_.ring_max_hop(hop_bytes_);
    // Hops into ranks r-first-1 down to r-last+1, then our own.
    return links_.ring_hops(mod(r_ - (last - 1), p_), last - 1 - first, hop_bytes_) +
           links_.ring_hops(r_, 1, hop_bytes_);
  }

  void post_recv() {
    size_t bytes = 0;
    const double path = unit_size(next_recv_, true, &bytes);
    recvs_.push_back({bytes ? links_.irecv_train(mod(r_ - 1, p_), bytes, path, kTagData) : nullptr, next_recv_});
    ++next_recv_;
  }

  // A train goes once the train before it has arrived (a ring of `units` steps, each m
  // times as long); the first at once. Sends in flight as in the byte ring.
  Status send_ready(int64_t arrived_units) {
    for (; next_send_ < std::min(units_, arrived_units + 1); ++next_send_) {
      while (sends_.size() >= max_sends_) {
        HVD_RETURN_IF_ERROR(sends_.front()->wait(a_.deadline));
        sends_.pop_front();
      }
      size_t bytes = 0;
      unit_size(next_send_, false, &bytes);
      if (bytes) sends_.push_back(links_.isend_train(mod(r_ + 1, p_), bytes, kTagData));
    }
    return Status::OK();
  }

  TrainLinks& links_;
  const RingAllreduce& a_;
  Device& dev_;
  const int p_, r_;
  const size_t es_;
  const EvenSplit off_;
  const int64_t total_, m_, units_;
  const size_t hop_bytes_;
  // Trains on one link: at most two in flight (the next one's latency overlaps the
  // previous one's bytes, as messages on one connection do, without many parallel flows).
  const int64_t window_;
  const size_t max_sends_;
  std::deque<Pending> recvs_;
  std::deque<std::unique_ptr<Request>> sends_;
  int64_t next_recv_ = 0, next_send_ = 0;  // trains
};

}  // namespace

bool train_ring_allreduce(TrainLinks& links, const RingAllreduce& a, Device& dev, Status* done) {
  const int p = links.group().size();
  if (p == 1 || a.count == 0 || links.transfers() <= 0) return false;
  const EvenSplit off(a.count, p);
  const int64_t max_chunk = off[1] - off[0];  // even split: the first is largest
  const int64_t seg = std::max<int64_t>(1, a.segment_bytes / static_cast<int64_t>(dtype_size(a.dt)));
  const int64_t slices = a.lockstep ? 1 : std::max<int64_t>(1, (max_chunk + seg - 1) / seg);
  if (slices != 1) return false;
  const int64_t total = 2 * static_cast<int64_t>(p - 1);
  const int64_t m = (total + links.transfers() - 1) / links.transfers();  // steps per train
  if (m < 8) return false;
  *done = TrainRing(links, a, dev, m).run();
  return true;
}

}  // namespace hvd::sim
