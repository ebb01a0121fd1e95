#include "core/control_plane.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace hvd {

ControlPlane::ControlPlane(Transport& t, Platform& p, const Logger& log, double warn_s,
                           double shutdown_s)
    : t_(t), p_(p), log_(log), warn_s_(warn_s), shutdown_s_(shutdown_s) {}

// Binomial tree rooted at 0: a rank's parent clears its lowest set bit.
int ControlPlane::parent() const {
  int r = t_.rank();
  return r == 0 ? -1 : (r & (r - 1));
}

std::vector<int> ControlPlane::children() const {
  std::vector<int> out;
  int r = t_.rank();
  int n = t_.size();
  for (int mask = 1; mask < n; mask <<= 1) {
    if (r & mask) break;
    if (r + mask < n) out.push_back(r + mask);
  }
  return out;
}

Status ControlPlane::wait(Request& req, int peer, const char* what, double start) {
  if (start < 0) start = p_.now();
  double give_up = shutdown_s_ > 0 ? start + shutdown_s_ : kNoDeadline;
  double next_warning = start + warn_s_;
  while (true) {
    Status s = req.wait(std::min(next_warning, give_up));
    if (s.ok()) return s;
    // The peer's connection failed (it died, or gave up and left): pass on what this rank
    // knows and name the rank that was lost first, if the peer announced one.
    if (s.code() != StatusCode::kTimeout) return name_gone(s, peer);
    double waited = p_.now() - start;
    if (p_.now() >= give_up) {
      // Tell the others at once what this rank knows (a survivor waiting on this one may be
      // about to give up too), then wait a short grace for the peer's own notice.
      announce_lost(lost_behind(peer, 0));
      const int lost = lost_behind(peer, std::min(0.5, 0.2 * shutdown_s_));
      if (lost != peer) {
        return Status::Timeout("rank " + std::to_string(lost) + " is gone: rank " + std::to_string(peer) +
                               ", which waited for it, did not answer the " + what + " for " +
                               std::to_string(static_cast<int>(waited)) + " s (stall shutdown time); stopping the runtime");
      }
      return Status::Timeout("rank " + std::to_string(peer) + " did not answer the " + what +
                             " for " + std::to_string(static_cast<int>(waited)) +
                             " s (stall shutdown time); stopping the runtime");
    }
    HVD_LOG(log_, kWarning, "waiting " << static_cast<int>(waited) << " s for rank " << peer
                                       << " in the " << what
                                       << " (it may have stalled or died)");
    next_warning += warn_s_;
  }
}

Status ControlPlane::name_gone(const Status& why, int peer) {
  if (peer < 0 || peer >= t_.size() || peer == t_.rank()) return why;
  announce_lost(lost_behind(peer, 0));
  const int lost = lost_behind(peer, std::min(0.5, 0.2 * shutdown_s_));
  if (lost == peer) return why;
  return Status::Timeout("rank " + std::to_string(lost) + " is gone: rank " + std::to_string(peer) +
                             ", which waited for it, did not answer (" + why.message() + ")",
                         lost);
}

int ControlPlane::lost_behind(int peer, double grace) {
  // The peer gives up on its own peer at about the same time as this rank on it (both waits
  // began in the same round): a short grace lets its notice arrive.
  if (auto it = lost_by_.find(peer); it != lost_by_.end()) return it->second;
  int32_t notice = -1;
  auto rq = t_.irecv(peer, &notice, sizeof notice, kTagLost);
  const Status s = rq->wait(p_.now() + grace);
  if (s.ok() && notice >= 0 && notice < t_.size() && notice != t_.rank()) return lost_by_[peer] = notice;
  return peer;  // (the pending receive is cancelled with its request)
}

void ControlPlane::announce_lost(int lost) {
  if (lost_ >= 0) return;
  lost_ = lost;
  for (int r = 0; r < t_.size(); ++r)
    if (r != t_.rank() && r != lost) notices_.push_back(t_.isend(r, &lost_, sizeof lost_, kTagLost));
}

// A receive started at `start` first waits until the first stall warning (or the give-up
// time, if sooner).
double ControlPlane::first_deadline(double start) const {
  return std::min(start + warn_s_, shutdown_s_ > 0 ? start + shutdown_s_ : kNoDeadline);
}

Status ControlPlane::recv(int peer, void* data, size_t bytes, const char* what) {
  // The common case in one transport call: the message comes before the first warning.
  const double start = p_.now();
  const double first = first_deadline(start);
  std::unique_ptr<Request> pending;
  const IoPiece into{data, bytes};
  Status s = recv_until(t_, peer, RecvInto{IoSpan(&into, 1)}, kTagControl, first, &pending);
  if (s.ok()) return s;
  if (s.code() != StatusCode::kTimeout || !pending) return name_gone(s, peer);
  return wait(*pending, peer, what, start);
}

// A blob is one message whose size the receiver learns when it matches (RecvInto::sink).
Status ControlPlane::send_blob(int peer, const uint8_t* data, size_t size) {
  auto r = t_.isend(peer, data, size, kTagControl);
  return wait(*r, peer, "negotiation");
}

namespace {

// Appends a sized message to a buffer, growing it to the exact size (doubling would leave
// up to half of the largest buffers, a subtree's requests near the root, unused).
template <class Buffer>
class AppendSink final : public SizedSink {
 public:
  explicit AppendSink(Buffer* out) : out_(out) {}
  void* room(size_t bytes) override {
    const size_t at = out_->size();
    if (at + bytes > out_->capacity()) out_->reserve(at + bytes);
    out_->resize(at + bytes);
    return out_->data() + at;
  }

 private:
  Buffer* out_;
};

}  // namespace

template <class Buffer>
Status ControlPlane::recv_blob(int peer, Buffer* out) {
  AppendSink<Buffer> sink(out);
  // The common case in one transport call: the message comes before the first warning.
  const double start = p_.now();
  const double first = first_deadline(start);
  std::unique_ptr<Request> pending;
  Status s = recv_until(t_, peer, RecvInto{{}, &sink}, kTagControl, first, &pending);
  if (s.ok()) return s;
  if (s.code() != StatusCode::kTimeout || !pending) return name_gone(s, peer);
  return wait(*pending, peer, "negotiation", start);
}

// Blobs travel up the tree as concatenated (rank, length, bytes) records. Each child's blob
// is received into a buffer of its own, and a rank sends its own record and its children's
// blobs up as one message of their total size (isendv of the pieces): the simulator copies each
// piece straight into the parent's buffer, once per level, where appending to one buffer
// copied them again on every growth and faulted in up to twice the memory (at 16,384
// ranks the kernel's zeroing of fresh pages was a quarter of the wall time; this cut the
// run's system time from 21 to 16 s).
// A child's buffer is kept between cycles up to this size: most ranks' subtrees of
// requests fit, and reusing it saves the allocation and page faults of a fresh one every
// cycle; the few large ones (near the root) are given back once used, so that idle ranks
// do not hold np log np bytes of old requests.
constexpr size_t kKeepGatherBytes = 16 << 10;

namespace {

void recycle(ByteBuffer* b) {
  if (b->capacity() > kKeepGatherBytes) ByteBuffer().swap(*b);
  else b->clear();
}

const uint8_t kNoBytes = 0;

}  // namespace

StatusOr<Gathered> ControlPlane::gather(std::vector<uint8_t> mine) {
  const std::vector<int> kids = children();
  kids_.resize(kids.size());
  for (ByteBuffer& b : kids_) recycle(&b);
  mine_ = std::move(mine);
  const int32_t me = t_.rank();
  const int64_t len = static_cast<int64_t>(mine_.size());
  std::memcpy(head_.data(), &me, 4);
  std::memcpy(head_.data() + 4, &len, 8);
  for (size_t i = 0; i < kids.size(); ++i) HVD_RETURN_IF_ERROR(recv_blob(kids[i], &kids_[i]));
  Gathered all;
  if (me != 0) {
    std::vector<IoPiece> pieces;
    pieces.reserve(2 + kids_.size());
    pieces.push_back({head_.data(), head_.size()});
    if (!mine_.empty()) pieces.push_back({mine_.data(), mine_.size()});
    for (ByteBuffer& b : kids_)
      if (!b.empty()) pieces.push_back({b.data(), b.size()});
    auto r = t_.isendv(parent(), pieces, kTagControl);
    Status sent = wait(*r, parent(), "negotiation");
    r.reset();
    std::vector<uint8_t>().swap(mine_);  // sent: not held until the next cycle
    for (ByteBuffer& b : kids_) recycle(&b);
    HVD_RETURN_IF_ERROR(sent);
    return all;
  }
  all.spans_.assign(static_cast<size_t>(t_.size()), {&kNoBytes, 0});
  all.spans_[0] = {mine_.empty() ? &kNoBytes : mine_.data(), mine_.size()};
  for (const ByteBuffer& b : kids_) {
    size_t off = 0;
    while (off < b.size()) {
      int32_t rank;
      int64_t n;
      if (off + 12 > b.size()) return Status::Internal("corrupt gathered control message");
      std::memcpy(&rank, b.data() + off, 4);
      std::memcpy(&n, b.data() + off + 4, 8);
      if (rank <= 0 || rank >= t_.size() || n < 0 || static_cast<uint64_t>(n) > b.size() - off - 12)
        return Status::Internal("corrupt gathered control message");
      all.spans_[static_cast<size_t>(rank)] = {b.data() + off + 12, static_cast<size_t>(n)};
      off += 12 + static_cast<size_t>(n);
    }
  }
  return all;
}

Status ControlPlane::bcast(std::vector<uint8_t>* data) {
  if (t_.rank() != 0) {
    data->clear();
    HVD_RETURN_IF_ERROR(recv_blob(parent(), data));
  }
  for (int c : children()) {
    HVD_RETURN_IF_ERROR(send_blob(c, data->data(), data->size()));
  }
  return Status::OK();
}

// Recursive doubling (ranks beyond the largest power of two first fold into a partner):
// log2(p) exchange rounds instead of a binomial tree's 2 log2(p) one-way hops, which is
// what a cache-hit negotiation costs. AND and OR are commutative and exact, so every
// rank ends with the same bits. Segments riding on the bits (BitsPayload) are reduced
// pairwise in the same rounds: both sides of an exchange compute mine (+) theirs over the
// same pair of partial results, and the reductions are commutative, so every rank ends
// with the same bytes too.
Status ControlPlane::allreduce_bits(std::vector<uint64_t>* and_bits,
                                    std::vector<uint64_t>* or_bits, BitsPayload* payload) {
  const int p = t_.size(), r = t_.rank();
  if (p == 1) return Status::OK();
  const size_t na = and_bits->size(), nb = na + or_bits->size();
  std::vector<uint64_t>& mine = bits_mine_;
  std::vector<uint64_t>& theirs = bits_theirs_;
  mine.resize(nb);
  theirs.resize(nb);
  std::copy(and_bits->begin(), and_bits->end(), mine.begin());
  std::copy(or_bits->begin(), or_bits->end(), mine.begin() + static_cast<long>(na));
  const uint64_t flag = payload ? payload->flag : 0;
  if (payload && !(mine[0] & flag)) payload->data.clear();
  // Folds what arrived (bits in `theirs`, segments at `seg` when the sender attached them)
  // into `mine` and the payload.
  auto fold = [&](const uint8_t* seg, size_t seg_bytes) -> Status {
    if (payload && (mine[0] & flag) && (theirs[0] & flag)) {
      ByteBuffer& out = bits_next_;
      out.clear();
      size_t my_off = 0, their_off = 0;
      const uint8_t* my_data = payload->data.data();
      for (size_t w = 1; w < na; ++w) {
        const uint64_t a = mine[w], b = theirs[w];
        for (uint64_t x = a | b; x != 0; x &= x - 1) {
          const int bit = static_cast<int>((w - 1) * 64 + static_cast<size_t>(std::countr_zero(x)));
          const uint64_t m = uint64_t{1} << (bit % 64);
          const size_t n = payload->bytes_of(bit);
          if ((a & m) && (b & m)) {
            if (my_off + n > payload->data.size() || their_off + n > seg_bytes)
              return Status::Internal("corrupt response-cache message: its segments do not match its bits");
            const size_t at = out.size();
            out.resize(at + n);
            payload->reduce(out.data() + at, my_data + my_off, seg + their_off, bit);
          }
          if (a & m) my_off += n;
          if (b & m) their_off += n;
        }
      }
      if (their_off != seg_bytes)
        return Status::Internal("corrupt response-cache message: its segments do not match its bits");
      std::swap(payload->data, out);
    } else if (payload) {
      payload->data.clear();
    }
    for (size_t i = 0; i < na; ++i) mine[i] &= theirs[i];
    for (size_t i = na; i < nb; ++i) mine[i] |= theirs[i];
    return Status::OK();
  };
  const char* what = "response-cache bit exchange";
  // This rank's bits and, while its flag stands, its segments: one message.
  // (Copied into one buffer: a message of two pieces costs an MPI datatype per send.)
  auto post_send = [&](int peer) {
    if (!payload || !(mine[0] & flag) || payload->data.empty()) return t_.isend(peer, mine.data(), nb * 8, kTagControl);
    bits_out_.resize(nb * 8 + payload->data.size());
    std::memcpy(bits_out_.data(), mine.data(), nb * 8);
    std::memcpy(bits_out_.data() + nb * 8, payload->data.data(), payload->data.size());
    return t_.isend(peer, bits_out_.data(), bits_out_.size(), kTagControl);
  };
  auto send_to = [&](int peer) {
    auto q = post_send(peer);
    return wait(*q, peer, what);
  };
  // Receives a peer's message into `theirs` (and bits_in_ for its segments) and folds it.
  auto take = [&](int peer, const Status& got) -> Status {
    HVD_RETURN_IF_ERROR(got);
    if (!payload) return fold(nullptr, 0);
    if (bits_in_.size() < nb * 8) return Status::Internal("corrupt response-cache message from rank " + std::to_string(peer));
    std::memcpy(theirs.data(), bits_in_.data(), nb * 8);
    return fold(bits_in_.data() + nb * 8, bits_in_.size() - nb * 8);
  };
  auto recv_from = [&](int peer) -> Status {
    if (!payload) return take(peer, recv(peer, theirs.data(), nb * 8, what));
    bits_in_.clear();
    return take(peer, recv_blob(peer, &bits_in_));
  };
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  const int rem = p - pof2;
  int newrank;
  if (r < 2 * rem) {
    if (r % 2 == 0) {  // hands its bits to r+1 and waits for the result
      HVD_RETURN_IF_ERROR(send_to(r + 1));
      newrank = -1;
    } else {
      HVD_RETURN_IF_ERROR(recv_from(r - 1));
      newrank = r / 2;
    }
  } else {
    newrank = r - rem;
  }
  if (newrank >= 0) {
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const int pn = newrank ^ mask;
      const int peer = pn < rem ? pn * 2 + 1 : pn + rem;
      std::unique_ptr<Request> rq;
      AppendSink<ByteBuffer> into(&bits_in_);
      if (payload) {
        bits_in_.clear();
        rq = t_.irecv_sized(peer, &into, kTagControl);
      } else {
        rq = t_.irecv(peer, theirs.data(), nb * 8, kTagControl);
      }
      auto sq = post_send(peer);
      const Status got = wait(*rq, peer, what);
      HVD_RETURN_IF_ERROR(wait(*sq, peer, what));
      HVD_RETURN_IF_ERROR(take(peer, got));
    }
  }
  if (r < 2 * rem) {
    if (r % 2 == 0) {  // the result: its bits, and the segments where the flag stood
      if (!payload) {
        HVD_RETURN_IF_ERROR(recv(r + 1, mine.data(), nb * 8, what));
      } else {
        bits_in_.clear();
        HVD_RETURN_IF_ERROR(recv_blob(r + 1, &bits_in_));
        if (bits_in_.size() < nb * 8) return Status::Internal("corrupt response-cache message from rank " + std::to_string(r + 1));
        std::memcpy(mine.data(), bits_in_.data(), nb * 8);
        payload->data.assign(bits_in_.begin() + static_cast<long>(nb * 8), bits_in_.end());
        if (!(mine[0] & flag)) payload->data.clear();
      }
    } else {
      HVD_RETURN_IF_ERROR(send_to(r - 1));
    }
  }
  std::copy(mine.begin(), mine.begin() + static_cast<long>(na), and_bits->begin());
  std::copy(mine.begin() + static_cast<long>(na), mine.end(), or_bits->begin());
  return Status::OK();
}

}  // namespace hvd
