#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <string>
#include <set>

#include "hvd/transport.h"

namespace hvd {

int Transport::local_rank() const {
  int me = node_of(rank());
  int n = 0;
  for (int r = 0; r < rank(); ++r) n += node_of(r) == me;
  return n;
}

int Transport::local_size() const {
  int me = node_of(rank());
  int n = 0;
  for (int r = 0; r < size(); ++r) n += node_of(r) == me;
  return n;
}

int Transport::cross_rank() const {
  std::set<int> before;
  int me = node_of(rank());
  for (int r = 0; r < size(); ++r)
    if (node_of(r) < me) before.insert(node_of(r));
  return static_cast<int>(before.size());
}

int Transport::cross_size() const {
  std::set<int> nodes;
  for (int r = 0; r < size(); ++r) nodes.insert(node_of(r));
  return static_cast<int>(nodes.size());
}

bool Transport::homogeneous() const {
  std::map<int, int> count;
  for (int r = 0; r < size(); ++r) ++count[node_of(r)];
  for (const auto& [node, n] : count)
    if (n != count.begin()->second) return false;
  return true;
}

Status Transport::recv_until(int peer, void* data, size_t bytes, int tag, double deadline_s,
                             std::unique_ptr<Request>* pending) {
  auto r = irecv(peer, data, bytes, tag);
  Status s = r->wait(deadline_s);
  if (s.code() == StatusCode::kTimeout) *pending = std::move(r);
  return s;
}

namespace {

// The default sized send: a fixed-size head (size and first bytes) and, when needed, the
// rest. Owns the head until both are through.
class SizedSendRequest final : public Request {
 public:
  SizedSendRequest(Transport& t, int peer, const void* data, size_t bytes, int tag) {
    const int64_t n = static_cast<int64_t>(bytes);
    const size_t inline_bytes = std::min(bytes, Transport::kSizedHead - sizeof n);
    std::memcpy(head_.data(), &n, sizeof n);
    if (inline_bytes) std::memcpy(head_.data() + sizeof n, data, inline_bytes);
    std::memset(head_.data() + sizeof n + inline_bytes, 0, head_.size() - sizeof n - inline_bytes);
    head_req_ = t.isend(peer, head_.data(), head_.size(), tag);
    if (bytes > inline_bytes)
      rest_req_ = t.isend(peer, static_cast<const uint8_t*>(data) + inline_bytes, bytes - inline_bytes, tag);
  }
  bool test() override { return head_req_->test() && (!rest_req_ || rest_req_->test()); }
  Status wait(double deadline) override {
    HVD_RETURN_IF_ERROR(head_req_->wait(deadline));
    return rest_req_ ? rest_req_->wait(deadline) : Status::OK();
  }

 private:
  std::array<uint8_t, Transport::kSizedHead> head_;
  std::unique_ptr<Request> head_req_, rest_req_;
};

// The default sized receive: the head, then (once its size is known) the rest.
class SizedRecvRequest final : public Request {
 public:
  SizedRecvRequest(Transport& t, int peer, SizedSink* sink, int tag) : t_(t), peer_(peer), tag_(tag), sink_(sink) {
    inner_ = t_.irecv(peer, head_.data(), head_.size(), tag);
  }
  bool test() override {
    while (!done_ && inner_->test()) advance(inner_->wait(kNoDeadline));
    return done_;
  }
  Status wait(double deadline) override {
    while (!done_) {
      Status s = inner_->wait(deadline);
      if (s.code() == StatusCode::kTimeout) return s;
      advance(std::move(s));
    }
    return status_;
  }

 private:
  // The message in hand (head or rest) has completed with `s`: go on to the next step.
  void advance(Status s) {
    if (!s.ok() || rest_) return finish(std::move(s));
    int64_t n = 0;
    std::memcpy(&n, head_.data(), sizeof n);
    if (n < 0 || n > (int64_t{1} << 34)) return finish(Status::Internal("corrupt sized message: size " + std::to_string(n)));
    const size_t total = static_cast<size_t>(n), inline_bytes = std::min(total, head_.size() - sizeof n);
    auto* dst = static_cast<uint8_t*>(sink_->room(total));
    if (!dst && total) return finish(Status::Internal("no room for a sized message of " + std::to_string(total) + " bytes"));
    if (inline_bytes) std::memcpy(dst, head_.data() + sizeof n, inline_bytes);
    if (total == inline_bytes) return finish(Status::OK());
    rest_ = true;
    inner_ = t_.irecv(peer_, dst + inline_bytes, total - inline_bytes, tag_);
  }
  void finish(Status s) {
    status_ = std::move(s);
    done_ = true;
  }
  Transport& t_;
  int peer_, tag_;
  SizedSink* sink_;
  std::array<uint8_t, Transport::kSizedHead> head_;
  std::unique_ptr<Request> inner_;
  bool rest_ = false, done_ = false;
  Status status_;
};

}  // namespace

std::unique_ptr<Request> Transport::isend_sized(int peer, const void* data, size_t bytes, int tag) {
  return std::make_unique<SizedSendRequest>(*this, peer, data, bytes, tag);
}

std::unique_ptr<Request> Transport::irecv_sized(int peer, SizedSink* sink, int tag) {
  return std::make_unique<SizedRecvRequest>(*this, peer, sink, tag);
}

Status Transport::recv_sized_until(int peer, SizedSink* sink, int tag, double deadline_s,
                                   std::unique_ptr<Request>* pending) {
  auto r = irecv_sized(peer, sink, tag);
  Status s = r->wait(deadline_s);
  if (s.code() == StatusCode::kTimeout) *pending = std::move(r);
  return s;
}

Status send(Transport& t, int peer, const void* data, size_t bytes, int tag, double deadline) {
  if (bytes == 0) return Status::OK();
  return t.isend(peer, data, bytes, tag)->wait(deadline);
}

Status recv(Transport& t, int peer, void* data, size_t bytes, int tag, double deadline) {
  if (bytes == 0) return Status::OK();
  return t.irecv(peer, data, bytes, tag)->wait(deadline);
}

Status sendrecv(Transport& t, int to, const void* sdata, size_t sbytes, int from, void* rdata,
                size_t rbytes, int tag, double deadline) {
  std::unique_ptr<Request> r, s;
  if (rbytes) r = t.irecv(from, rdata, rbytes, tag);
  if (sbytes) s = t.isend(to, sdata, sbytes, tag);
  Status st;
  if (r) st = r->wait(deadline);
  if (s) {
    Status ss = s->wait(deadline);
    if (st.ok()) st = ss;
  }
  return st;
}

}  // namespace hvd

namespace hvd {
namespace {

size_t total_bytes(const std::vector<IoPiece>& pieces, bool* phantom) {
  size_t n = 0;
  *phantom = false;
  for (const IoPiece& p : pieces) {
    n += p.bytes;
    *phantom = *phantom || (p.data == nullptr && p.bytes > 0);
  }
  return n;
}

// A send of packed pieces: owns the staging copy until the transfer completes.
class PackedRequest final : public Request {
 public:
  PackedRequest(size_t bytes, std::vector<IoPiece> scatter)
      : staging_(bytes ? new uint8_t[bytes] : nullptr), scatter_(std::move(scatter)) {}
  void set(std::unique_ptr<Request> inner) { inner_ = std::move(inner); }
  uint8_t* data() { return staging_.get(); }
  bool test() override { return inner_->test() && unpack(); }
  Status wait(double deadline) override {
    Status s = inner_->wait(deadline);
    if (s.ok()) unpack();
    return s;
  }

 private:
  bool unpack() {
    size_t off = 0;
    for (const IoPiece& p : scatter_) {
      if (p.bytes && p.data && staging_) std::memcpy(p.data, staging_.get() + off, p.bytes);
      off += p.bytes;
    }
    scatter_.clear();
    return true;
  }
  std::unique_ptr<uint8_t[]> staging_;  // not zero-filled: it is written before it is read
  std::vector<IoPiece> scatter_;
  std::unique_ptr<Request> inner_;
};

class CompletedRequest final : public Request {
 public:
  explicit CompletedRequest(Status s) : s_(std::move(s)) {}
  bool test() override { return true; }
  Status wait(double) override { return s_; }

 private:
  Status s_;
};

}  // namespace

std::unique_ptr<Request> completed_request(Status s) {
  return std::make_unique<CompletedRequest>(std::move(s));
}

namespace {

// The default gathered sends: one piece as it is, phantom pieces as one phantom message,
// otherwise the pieces packed into a buffer the request owns, sent by `send`.
template <class Send>
std::unique_ptr<Request> send_packed(const std::vector<IoPiece>& pieces, Send send) {
  if (pieces.size() == 1) return send(pieces[0].data, pieces[0].bytes);
  bool phantom;
  const size_t n = total_bytes(pieces, &phantom);
  if (phantom) return send(nullptr, n);
  auto req = std::make_unique<PackedRequest>(n, std::vector<IoPiece>{});
  size_t off = 0;
  for (const IoPiece& p : pieces) {
    if (p.bytes) std::memcpy(req->data() + off, p.data, p.bytes);
    off += p.bytes;
  }
  req->set(send(req->data(), n));
  return req;
}

}  // namespace

std::unique_ptr<Request> Transport::isendv(int peer, const std::vector<IoPiece>& pieces, int tag) {
  return send_packed(pieces, [&](const void* data, size_t n) { return isend(peer, data, n, tag); });
}

std::unique_ptr<Request> Transport::isend_sized_v(int peer, const std::vector<IoPiece>& pieces, int tag) {
  return send_packed(pieces, [&](const void* data, size_t n) { return isend_sized(peer, data, n, tag); });
}

std::unique_ptr<Request> Transport::irecvv(int peer, const std::vector<IoPiece>& pieces, int tag) {
  if (pieces.size() == 1) return irecv(peer, pieces[0].data, pieces[0].bytes, tag);
  bool phantom;
  const size_t n = total_bytes(pieces, &phantom);
  if (phantom) return irecv(peer, nullptr, n, tag);
  auto req = std::make_unique<PackedRequest>(n, pieces);
  req->set(irecv(peer, req->data(), n, tag));
  return req;
}

}  // namespace hvd
