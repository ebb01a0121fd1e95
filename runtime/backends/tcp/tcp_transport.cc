// A group of a TCP world: member indices map to world ranks, and every message carries the
// group's id so that the world and its splits share the connections.
#include "backends/tcp/tcp_transport.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <tuple>

namespace hvd::tcp {

namespace {

constexpr int kTagSplitExchange = -0x5370;  // internal: never a runtime tag

// FNV-1a over the split's identity: the id every member of the new group computes alike.
uint64_t child_group(uint64_t parent, int seq, int color) {
  uint64_t h = 1469598103934665603ull;
  for (int64_t v : {static_cast<int64_t>(parent), int64_t{seq}, int64_t{color}}) {
    for (int b = 0; b < 8; ++b) {
      h ^= static_cast<uint64_t>(v >> (8 * b)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  return h == 0 ? 1 : h;  // 0 is the world
}

class TcpRequest final : public Request {
 public:
  TcpRequest(std::shared_ptr<Fabric> f, std::shared_ptr<Op> op) : f_(std::move(f)), op_(std::move(op)) {}
  ~TcpRequest() override {
    if (!f_->test(op_)) f_->cancel(op_);
  }
  bool test() override { return f_->test(op_); }
  Status wait(double deadline) override { return f_->wait(op_, deadline); }

 private:
  std::shared_ptr<Fabric> f_;
  std::shared_ptr<Op> op_;
};

class TcpTransport final : public Transport {
 public:
  TcpTransport(std::shared_ptr<Fabric> f, uint64_t group, std::vector<int> members, std::vector<int> node,
               int rank, double split_timeout_s)
      : f_(std::move(f)), group_(group), members_(std::move(members)), node_(std::move(node)), rank_(rank),
        split_timeout_s_(split_timeout_s) {}
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(members_.size()); }
  int node_of(int r) const override { return node_[static_cast<size_t>(r)]; }
  std::string name() const override { return "tcp"; }
  std::unique_ptr<Request> isendv(int peer, IoSpan pieces, int tag) override {
    return std::make_unique<TcpRequest>(f_, f_->post_send(world(peer), group_, tag, pieces));
  }
  std::unique_ptr<Request> irecv_into(int peer, const RecvInto& into, int tag) override {
    return std::make_unique<TcpRequest>(f_, f_->post_recv(world(peer), group_, tag, into));
  }
  std::unique_ptr<Transport> split(int color, int key) override;

 private:
  int world(int member) const { return members_[static_cast<size_t>(member)]; }
  Status exchange(int color, int key, std::vector<int32_t>* all);

  std::shared_ptr<Fabric> f_;
  uint64_t group_;
  std::vector<int> members_;
  std::vector<int> node_;
  int rank_;
  double split_timeout_s_;
  int split_seq_ = 0;
};

// Every member's (color, key), by member index, sent to and received from every other.
Status TcpTransport::exchange(int color, int key, std::vector<int32_t>* all) {
  const int n = size();
  all->assign(static_cast<size_t>(2 * n), 0);
  const int32_t mine[2] = {color, key};
  (*all)[static_cast<size_t>(2 * rank_)] = color;
  (*all)[static_cast<size_t>(2 * rank_ + 1)] = key;
  std::vector<std::unique_ptr<Request>> reqs;
  for (int q = 0; q < n; ++q) {
    if (q == rank_) continue;
    reqs.push_back(isend(q, mine, sizeof mine, kTagSplitExchange));
    reqs.push_back(irecv(q, all->data() + 2 * q, sizeof mine, kTagSplitExchange));
  }
  const double deadline = now_s() + split_timeout_s_;
  for (auto& r : reqs) HVD_RETURN_IF_ERROR(r->wait(deadline));
  return Status::OK();
}

std::unique_ptr<Transport> TcpTransport::split(int color, int key) {
  std::vector<int32_t> all;
  Status s = exchange(color, key, &all);
  if (!s.ok()) {  // the seam has no error path here: a world that cannot agree is over
    std::fprintf(stderr, "[hvd rank %d ERROR] tcp transport: split failed: %s\n", f_->rank(), s.message().c_str());
    std::exit(1);
  }
  const int seq = split_seq_++;
  if (color < 0) return nullptr;
  std::vector<std::tuple<int32_t, int>> order;  // (key, member)
  for (int q = 0; q < size(); ++q)
    if (all[static_cast<size_t>(2 * q)] == color) order.emplace_back(all[static_cast<size_t>(2 * q + 1)], q);
  std::sort(order.begin(), order.end());
  std::vector<int> members, node;
  int me = 0;
  for (const auto& [k, q] : order) {
    if (q == rank_) me = static_cast<int>(members.size());
    members.push_back(world(q));
    node.push_back(node_of(q));
  }
  return std::make_unique<TcpTransport>(f_, child_group(group_, seq, color), std::move(members), std::move(node),
                                        me, split_timeout_s_);
}

}  // namespace

std::unique_ptr<Transport> make_world_transport(std::shared_ptr<Fabric> fabric, std::vector<int> node,
                                                double split_timeout_s) {
  std::vector<int> members(static_cast<size_t>(fabric->size()));
  for (size_t r = 0; r < members.size(); ++r) members[r] = static_cast<int>(r);
  const int rank = fabric->rank();
  return std::make_unique<TcpTransport>(std::move(fabric), 0, std::move(members), std::move(node), rank,
                                        split_timeout_s);
}

}  // namespace hvd::tcp
