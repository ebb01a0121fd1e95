#include "core/control_plane.h"

#include <algorithm>
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
    if (s.code() != StatusCode::kTimeout) return s;
    double waited = p_.now() - start;
    if (p_.now() >= give_up) {
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
  Status s = t_.recv_until(peer, data, bytes, kTagControl, first, &pending);
  if (s.code() != StatusCode::kTimeout || !pending) return s;
  return wait(*pending, peer, what, start);
}

// A blob is one sized message (Transport::isend_sized): the receiver learns its size from
// the message, in one transfer where the backend can (the default costs a second message
// only for blobs that do not fit the first).
Status ControlPlane::send_blob(int peer, const uint8_t* data, size_t size) {
  auto r = t_.isend_sized(peer, data, size, kTagControl);
  return wait(*r, peer, "negotiation");
}

namespace {

// Appends a sized message to a buffer, growing it to the exact size: a gather appends a
// few (log2 np) messages, so doubling would save little copying and leave up to half of
// the largest buffers (the subtrees near the root: 47 MB at rank 0 per cycle without a
// response cache at 4,096 ranks) allocated and unused.
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
  Status s = t_.recv_sized_until(peer, &sink, kTagControl, first, &pending);
  if (s.code() != StatusCode::kTimeout || !pending) return s;
  return wait(*pending, peer, "negotiation", start);
}

// Blobs travel up the tree as concatenated (rank, length, bytes) records; each child's
// records are received straight onto the end of ours.
// gather()'s buffer is kept between cycles up to this size: most ranks' subtrees of
// requests fit, and reusing it saves the allocation, zeroing and page faults of growing a
// fresh one every cycle; the few large ones (near the root) are given back once used, so
// that idle ranks do not hold np log np bytes of old requests.
constexpr size_t kKeepGatherBytes = 16 << 10;

StatusOr<Gathered> ControlPlane::gather(std::vector<uint8_t> mine) {
  if (acc_.capacity() > kKeepGatherBytes) ByteBuffer().swap(acc_);
  ByteBuffer& acc = acc_;
  acc.resize(12 + mine.size());
  const int32_t me = t_.rank();
  const int64_t len = static_cast<int64_t>(mine.size());
  std::memcpy(acc.data(), &me, 4);
  std::memcpy(acc.data() + 4, &len, 8);
  if (!mine.empty()) std::memcpy(acc.data() + 12, mine.data(), mine.size());
  std::vector<uint8_t>().swap(mine);  // copied: not held through the waits below
  for (int c : children()) {
    HVD_RETURN_IF_ERROR(recv_blob(c, &acc));
  }
  Gathered all;
  if (t_.rank() != 0) {
    Status sent = send_blob(parent(), acc.data(), acc.size());
    if (acc_.capacity() > kKeepGatherBytes) ByteBuffer().swap(acc_);
    HVD_RETURN_IF_ERROR(sent);
    return all;
  }
  all.spans_.assign(static_cast<size_t>(t_.size()), {0, 0});
  size_t off = 0;
  while (off + 12 <= acc.size()) {
    int32_t rank;
    int64_t n;
    std::memcpy(&rank, acc.data() + off, 4);
    std::memcpy(&n, acc.data() + off + 4, 8);
    if (rank < 0 || rank >= t_.size() || n < 0 || off + 12 + static_cast<size_t>(n) > acc.size())
      return Status::Internal("corrupt gathered control message");
    all.spans_[static_cast<size_t>(rank)] = {off + 12, static_cast<size_t>(n)};
    off += 12 + static_cast<size_t>(n);
  }
  all.bytes_ = &acc_;
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
// rank ends with the same bits.
Status ControlPlane::allreduce_bits(std::vector<uint64_t>* and_bits,
                                    std::vector<uint64_t>* or_bits) {
  const int p = t_.size(), r = t_.rank();
  if (p == 1) return Status::OK();
  const size_t na = and_bits->size(), nb = na + or_bits->size();
  std::vector<uint64_t> mine(nb), theirs(nb);
  std::copy(and_bits->begin(), and_bits->end(), mine.begin());
  std::copy(or_bits->begin(), or_bits->end(), mine.begin() + static_cast<long>(na));
  auto fold = [&] {
    for (size_t i = 0; i < na; ++i) mine[i] &= theirs[i];
    for (size_t i = na; i < nb; ++i) mine[i] |= theirs[i];
  };
  const char* what = "response-cache bit exchange";
  auto send_to = [&](int peer) {
    auto q = t_.isend(peer, mine.data(), nb * 8, kTagControl);
    return wait(*q, peer, what);
  };
  auto recv_from = [&](int peer, std::vector<uint64_t>* into) { return recv(peer, into->data(), nb * 8, what); };
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  const int rem = p - pof2;
  int newrank;
  if (r < 2 * rem) {
    if (r % 2 == 0) {  // hands its bits to r+1 and waits for the result
      HVD_RETURN_IF_ERROR(send_to(r + 1));
      newrank = -1;
    } else {
      HVD_RETURN_IF_ERROR(recv_from(r - 1, &theirs));
      fold();
      newrank = r / 2;
    }
  } else {
    newrank = r - rem;
  }
  if (newrank >= 0) {
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const int pn = newrank ^ mask;
      const int peer = pn < rem ? pn * 2 + 1 : pn + rem;
      auto rq = t_.irecv(peer, theirs.data(), nb * 8, kTagControl);
      auto sq = t_.isend(peer, mine.data(), nb * 8, kTagControl);
      HVD_RETURN_IF_ERROR(wait(*rq, peer, what));
      HVD_RETURN_IF_ERROR(wait(*sq, peer, what));
      fold();
    }
  }
  if (r < 2 * rem) {
    HVD_RETURN_IF_ERROR(r % 2 == 0 ? recv_from(r + 1, &mine) : send_to(r - 1));
  }
  std::copy(mine.begin(), mine.begin() + static_cast<long>(na), and_bits->begin());
  std::copy(mine.begin() + static_cast<long>(na), mine.end(), or_bits->begin());
  return Status::OK();
}

}  // namespace hvd
