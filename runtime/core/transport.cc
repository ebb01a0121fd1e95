#include <cstring>
#include <map>
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

std::unique_ptr<Request> Transport::isendv(int peer, const std::vector<IoPiece>& pieces, int tag) {
  if (pieces.size() == 1) return isend(peer, pieces[0].data, pieces[0].bytes, tag);
  bool phantom;
  const size_t n = total_bytes(pieces, &phantom);
  if (phantom) return isend(peer, nullptr, n, tag);
  auto req = std::make_unique<PackedRequest>(n, std::vector<IoPiece>{});
  size_t off = 0;
  for (const IoPiece& p : pieces) {
    if (p.bytes) std::memcpy(req->data() + off, p.data, p.bytes);
    off += p.bytes;
  }
  req->set(isend(peer, req->data(), n, tag));
  return req;
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
