#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include "hvd/transport.h"

namespace hvd {

GroupLayout GroupLayout::of(const Transport& t) {
  GroupLayout l;
  const size_t n = static_cast<size_t>(t.size());
  std::map<int, int> per_node;  // node -> members on it
  l.local_rank.resize(n);
  for (size_t i = 0; i < n; ++i) l.local_rank[i] = per_node[t.node_of(static_cast<int>(i))]++;
  std::map<int, int> cross;  // node -> its index among the group's nodes, in node order
  for (const auto& [node, count] : per_node) cross.emplace(node, static_cast<int>(cross.size()));
  l.cross_rank.resize(n);
  l.local_size.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const int node = t.node_of(static_cast<int>(i));
    l.cross_rank[i] = cross[node];
    l.local_size[i] = per_node[node];
  }
  l.cross_size = static_cast<int>(per_node.size());
  for (const auto& [node, count] : per_node) l.homogeneous = l.homogeneous && count == per_node.begin()->second;
  return l;
}

const GroupLayout& Transport::layout() const {
  if (!layout_) layout_ = std::make_shared<const GroupLayout>(GroupLayout::of(*this));
  return *layout_;
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

Status recv_until(Transport& t, int peer, const RecvInto& into, int tag, double deadline_s,
                  std::unique_ptr<Request>* pending) {
  if (BlockingReceive* b = t.blocking()) return b->recv_until(peer, into, tag, deadline_s, pending);
  auto r = t.irecv_into(peer, into, tag);
  Status s = r->wait(deadline_s);
  if (s.code() == StatusCode::kTimeout) *pending = std::move(r);
  return s;
}

size_t total_bytes(IoSpan pieces, bool* phantom) {
  size_t n = 0;
  bool ph = false;
  for (const IoPiece& p : pieces) {
    n += p.bytes;
    ph = ph || (p.data == nullptr && p.bytes > 0);
  }
  if (phantom) *phantom = ph;
  return n;
}

namespace {

// A transfer through a staging copy of its pieces, which the request owns until the
// transfer completes; a receive unpacks it into the pieces then.
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

std::unique_ptr<Request> send_packed(IoSpan pieces,
                                     const std::function<std::unique_ptr<Request>(const void*, size_t)>& send) {
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

std::unique_ptr<Request> recv_packed(IoSpan pieces,
                                     const std::function<std::unique_ptr<Request>(void*, size_t)>& recv) {
  if (pieces.size() == 1) return recv(pieces[0].data, pieces[0].bytes);
  bool phantom;
  const size_t n = total_bytes(pieces, &phantom);
  if (phantom) return recv(nullptr, n);
  auto req = std::make_unique<PackedRequest>(n, std::vector<IoPiece>(pieces.begin(), pieces.end()));
  req->set(recv(req->data(), n));
  return req;
}

}  // namespace hvd
