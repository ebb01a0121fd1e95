// In-process Transport: every rank is a thread; a message is matched by (group, source,
// destination, tag) in FIFO order and copied straight from the sender's buffer into the
// receiver's (rendezvous), so a send completes when its receive has copied it.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <tuple>

#include "hvd/local.h"

namespace hvd {

struct LocalOp {
  std::vector<IoPiece> pieces;  // the send's bytes, or where the receive puts them
  SizedSink* sink = nullptr;    // a receive of any size: room asked at the match
  size_t bytes = 0;             // total of the pieces
  bool done = false;
  bool failed = false;
};

class LocalFabric {
 public:
  using Key = std::tuple<int, int, int, int>;  // group, src, dst, tag (world ranks)

  explicit LocalFabric(std::vector<int> node) : node_(std::move(node)) {}

  std::shared_ptr<LocalOp> post(const Key& k, bool is_send, IoSpan pieces, SizedSink* sink) {
    auto op = std::make_shared<LocalOp>();
    op->pieces.assign(pieces.begin(), pieces.end());
    op->sink = sink;
    op->bytes = total_bytes(pieces);
    std::lock_guard<std::mutex> lk(mu_);
    auto& peers = is_send ? recvs_[k] : sends_[k];
    if (!peers.empty()) {
      std::shared_ptr<LocalOp> other = peers.front();
      peers.pop_front();
      match(is_send ? op : other, is_send ? other : op);
      cv_.notify_all();
    } else {
      (is_send ? sends_[k] : recvs_[k]).push_back(op);
    }
    return op;
  }

  bool wait(const std::shared_ptr<LocalOp>& op, double deadline) {
    std::unique_lock<std::mutex> lk(mu_);
    while (!op->done) {
      if (deadline > 1e15) {
        cv_.wait(lk);
      } else {
        auto tp = std::chrono::steady_clock::time_point(std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(deadline)));
        if (cv_.wait_until(lk, tp) == std::cv_status::timeout && !op->done) return false;
      }
    }
    return !op->failed;
  }

  bool test(const std::shared_ptr<LocalOp>& op) {
    std::lock_guard<std::mutex> lk(mu_);
    return op->done;
  }

  // Withdraws an unmatched operation (its owner gave up) so nobody touches its buffer.
  void cancel(const Key& k, const std::shared_ptr<LocalOp>& op) {
    std::lock_guard<std::mutex> lk(mu_);
    for (auto* table : {&sends_, &recvs_}) {
      auto it = table->find(k);
      if (it == table->end()) continue;
      auto& q = it->second;
      q.erase(std::remove(q.begin(), q.end(), op), q.end());
    }
  }

  // Collective split: blocks until all `members` of `group` posted their (color, key).
  std::vector<int> split(int group, int seq, const std::vector<int>& members, int me, int color,
                         int key, int* new_group) {
    std::unique_lock<std::mutex> lk(mu_);
    SplitState& st = splits_[{group, seq}];
    st.entries[me] = {color, key};
    cv_.notify_all();
    cv_.wait(lk, [&] { return st.entries.size() == members.size(); });
    if (st.groups.empty()) {
      for (const auto& [rank, ck] : st.entries)
        if (ck.first >= 0 && !st.groups.count(ck.first)) st.groups[ck.first] = next_group_++;
    }
    if (color < 0) return {};
    *new_group = st.groups[color];
    std::vector<std::tuple<int, int>> order;  // (key, world rank)
    for (const auto& [rank, ck] : st.entries)
      if (ck.first == color) order.emplace_back(ck.second, rank);
    std::sort(order.begin(), order.end());
    std::vector<int> out;
    for (const auto& [k, r] : order) out.push_back(r);
    return out;
  }

  int node_of_world(int r) const { return node_[static_cast<size_t>(r)]; }

 private:
  struct SplitState {
    std::map<int, std::pair<int, int>> entries;  // world rank -> (color, key)
    std::map<int, int> groups;                   // color -> group id
  };

  // Copies the send's pieces into the receive's, as far as both reach.
  static void match(const std::shared_ptr<LocalOp>& s, const std::shared_ptr<LocalOp>& r) {
    if (r->sink) {
      void* dst = r->sink->room(s->bytes);
      r->pieces.assign(1, IoPiece{dst, dst ? s->bytes : 0});
      r->bytes = dst || !s->bytes ? s->bytes : 0;
    }
    size_t si = 0, so = 0, ri = 0, ro = 0;  // piece and offset in it, both sides
    while (si < s->pieces.size() && ri < r->pieces.size()) {
      const IoPiece &a = s->pieces[si], &b = r->pieces[ri];
      const size_t k = std::min(a.bytes - so, b.bytes - ro);
      if (k && a.data && b.data) std::memcpy(static_cast<char*>(b.data) + ro, static_cast<const char*>(a.data) + so, k);
      so += k;
      ro += k;
      if (so == a.bytes) ++si, so = 0;
      if (ro == b.bytes) ++ri, ro = 0;
    }
    s->done = r->done = true;
    s->failed = r->failed = s->bytes != r->bytes;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, std::deque<std::shared_ptr<LocalOp>>> sends_, recvs_;
  std::map<std::pair<int, int>, SplitState> splits_;
  int next_group_ = 1;
  std::vector<int> node_;
};

namespace {

class LocalRequest final : public Request {
 public:
  /// `peer`: the other rank's world index (named when the transfer times out).
  LocalRequest(std::shared_ptr<LocalFabric> f, LocalFabric::Key k, std::shared_ptr<LocalOp> op, int peer)
      : f_(std::move(f)), k_(k), op_(std::move(op)), peer_(peer) {}
  ~LocalRequest() override {
    if (!f_->test(op_)) f_->cancel(k_, op_);
  }
  bool test() override { return f_->test(op_); }
  Status wait(double deadline) override {
    if (f_->wait(op_, deadline)) return Status::OK();
    if (!op_->done)
      return Status::Timeout("local transport: transfer with rank " + std::to_string(peer_) + " did not complete in time",
                             peer_);
    return Status::Internal("local transport: message size mismatch");
  }

 private:
  std::shared_ptr<LocalFabric> f_;
  LocalFabric::Key k_;
  std::shared_ptr<LocalOp> op_;
  int peer_;
};

class LocalTransport final : public Transport {
 public:
  LocalTransport(std::shared_ptr<LocalFabric> f, int group, std::vector<int> members, int rank)
      : f_(std::move(f)), group_(group), members_(std::move(members)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(members_.size()); }
  int node_of(int r) const override { return f_->node_of_world(members_[static_cast<size_t>(r)]); }
  std::unique_ptr<Request> isendv(int peer, IoSpan pieces, int tag) override {
    LocalFabric::Key k{group_, me(), members_[static_cast<size_t>(peer)], tag};
    return std::make_unique<LocalRequest>(f_, k, f_->post(k, true, pieces, nullptr), std::get<2>(k));
  }
  std::unique_ptr<Request> irecv_into(int peer, const RecvInto& into, int tag) override {
    LocalFabric::Key k{group_, members_[static_cast<size_t>(peer)], me(), tag};
    return std::make_unique<LocalRequest>(f_, k, f_->post(k, false, into.pieces, into.sink), std::get<1>(k));
  }
  std::unique_ptr<Transport> split(int color, int key) override {
    int new_group = 0;
    std::vector<int> m = f_->split(group_, split_seq_++, members_, me(), color, key, &new_group);
    if (color < 0) return nullptr;
    int idx = static_cast<int>(std::find(m.begin(), m.end(), me()) - m.begin());
    return std::make_unique<LocalTransport>(f_, new_group, std::move(m), idx);
  }
  std::string name() const override { return "local"; }

 private:
  int me() const { return members_[static_cast<size_t>(rank_)]; }
  std::shared_ptr<LocalFabric> f_;
  int group_;
  std::vector<int> members_;
  int rank_;
  int split_seq_ = 0;
};

}  // namespace

LocalWorld::LocalWorld(int size, int ranks_per_node) : size_(size) {
  std::vector<int> node(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) node[static_cast<size_t>(r)] = ranks_per_node > 0 ? r / ranks_per_node : 0;
  fabric_ = std::make_shared<LocalFabric>(std::move(node));
}

LocalWorld::~LocalWorld() = default;

std::unique_ptr<Transport> LocalWorld::transport(int rank) {
  std::vector<int> members(static_cast<size_t>(size_));
  for (int r = 0; r < size_; ++r) members[static_cast<size_t>(r)] = r;
  return std::make_unique<LocalTransport>(fabric_, 0, std::move(members), rank);
}

std::unique_ptr<Transport> make_single_rank_transport() { return LocalWorld(1).transport(0); }

}  // namespace hvd
