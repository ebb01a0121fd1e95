// Transport over SimGrid. A message (group, src, dst, tag) travels through the mailbox
// named after those four, so SimGrid matches sends and receives FIFO per key exactly as
// MPI does; the transfer is one SimGrid flow from the sender's host to the receiver's,
// sharing every link of the route with the flows in flight (rendezvous: it starts when
// both sides are posted). Phantom messages carry no bytes; with data, the bytes are
// copied when the two sides match (the sender's buffer is stable until its request
// completes and the receiver reads it only after, so that is as good as at arrival).
#include <simgrid/Exception.hpp>

#include <algorithm>
#include <cstring>

#include "seams.h"

namespace hvd::sim {

SimFabric::SimFabric(std::vector<sg4::Host*> hosts, std::vector<int> node, bool with_data)
    : hosts_(std::move(hosts)), node_(std::move(node)), with_data_(with_data) {}

sg4::Mailbox* SimFabric::mailbox(int group, int src, int dst, int tag) {
  const uint64_t key = (static_cast<uint64_t>(group) << 44) | (static_cast<uint64_t>(src) << 24) |
                       (static_cast<uint64_t>(dst) << 4) | static_cast<uint64_t>(tag & 15);
  auto it = mailboxes_.find(key);
  if (it != mailboxes_.end()) return it->second;
  sg4::Mailbox* mb = sg4::Mailbox::by_name("g" + std::to_string(group) + ":" + std::to_string(src) +
                                           ">" + std::to_string(dst) + ":" + std::to_string(tag));
  mailboxes_.emplace(key, mb);
  return mb;
}

std::shared_ptr<DataMatch> SimFabric::post(sg4::Mailbox* mb, bool is_send, const void* src,
                                           void* dst, size_t bytes) {
  auto m = std::make_shared<DataMatch>();
  m->src = src;
  m->dst = dst;
  m->bytes = bytes;
  Queues& q = data_[mb];
  auto& others = is_send ? q.recvs : q.sends;
  if (others.empty()) {
    (is_send ? q.sends : q.recvs).push_back(m);
    return m;
  }
  std::shared_ptr<DataMatch> o = others.front();
  others.pop_front();
  DataMatch& s = is_send ? *m : *o;
  DataMatch& r = is_send ? *o : *m;
  const size_t n = std::min(s.bytes, r.bytes);
  if (n && s.src && r.dst) std::memcpy(r.dst, s.src, n);
  s.matched = r.matched = true;
  s.mismatch = r.mismatch = s.bytes != r.bytes;
  return m;
}

void SimFabric::withdraw(sg4::Mailbox* mb, const std::shared_ptr<DataMatch>& m) {
  auto it = data_.find(mb);
  if (it == data_.end()) return;
  for (auto* q : {&it->second.sends, &it->second.recvs}) q->erase(std::remove(q->begin(), q->end(), m), q->end());
}

std::vector<int> SimFabric::split(int group, int seq, size_t members, int me, int color, int key,
                                  int* new_group) {
  auto& slot = splits_[{group, seq}];
  if (!slot) slot = std::make_unique<SplitState>();
  SplitState& st = *slot;
  {
    std::unique_lock<sg4::Mutex> lk(*st.mu);
    st.entries[me] = {color, key};
    if (st.entries.size() == members) {
      for (const auto& [rank, ck] : st.entries)
        if (ck.first >= 0 && !st.groups.count(ck.first)) st.groups[ck.first] = next_group_++;
      st.cv->notify_all();
    }
    while (st.entries.size() < members) st.cv->wait(lk);
  }
  if (color < 0) return {};
  *new_group = st.groups[color];
  std::vector<std::pair<int, int>> order;  // (key, world rank)
  for (const auto& [rank, ck] : st.entries)
    if (ck.first == color) order.emplace_back(ck.second, rank);
  std::sort(order.begin(), order.end());
  std::vector<int> out;
  for (const auto& kr : order) out.push_back(kr.second);
  return out;
}

namespace {

int g_dummy_payload = 0;  // SimGrid needs a non-null payload pointer

class SimRequest final : public Request {
 public:
  SimRequest(std::shared_ptr<SimFabric> f, sg4::Mailbox* mb, sg4::CommPtr c,
             std::shared_ptr<DataMatch> m)
      : f_(std::move(f)), mb_(mb), comm_(std::move(c)), match_(std::move(m)) {}
  ~SimRequest() override {
    if (done_ || !comm_) return;
    // Abandoned before completion (its owner timed out): withdraw it.
    if (match_ && !match_->matched) f_->withdraw(mb_, match_);
    try {
      if (!comm_->test()) comm_->cancel();
    } catch (const simgrid::Exception&) {
    }
  }
  bool test() override {
    if (!done_) {
      try {
        done_ = comm_->test();
      } catch (const simgrid::Exception& e) {
        failed_ = e.what();
        done_ = true;
      }
    }
    return done_;
  }
  Status wait(double deadline) override {
    if (!done_) {
      try {
        if (deadline > 1e15) {
          comm_->wait();
        } else {
          // wait_any_for leaves the comm running on time-out (a plain wait_for cancels it),
          // so the caller may warn and wait again.
          const double left = deadline - sg4::Engine::get_clock();
          if (left <= 0 ? !comm_->test() : sg4::Comm::wait_any_for({comm_}, left) < 0)
            return Status::Timeout("simgrid transport: transfer did not complete in time");
        }
        done_ = true;
      } catch (const simgrid::Exception& e) {
        failed_ = e.what();
        done_ = true;
      }
    }
    if (!failed_.empty()) return Status::Internal("simgrid transport: " + failed_);
    if (match_ && match_->mismatch) return Status::Internal("simgrid transport: message size mismatch");
    return Status::OK();
  }

 private:
  std::shared_ptr<SimFabric> f_;
  sg4::Mailbox* mb_;
  sg4::CommPtr comm_;
  std::shared_ptr<DataMatch> match_;
  bool done_ = false;
  std::string failed_;
};

class SimTransport final : public Transport {
 public:
  SimTransport(std::shared_ptr<SimFabric> f, int group, std::vector<int> members, int rank)
      : f_(std::move(f)), group_(group), members_(std::move(members)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(members_.size()); }
  int node_of(int r) const override { return f_->node_of(members_[static_cast<size_t>(r)]); }
  std::unique_ptr<Request> isend(int peer, const void* data, size_t bytes, int tag) override {
    sg4::Mailbox* mb = f_->mailbox(group_, me(), members_[static_cast<size_t>(peer)], tag);
    std::shared_ptr<DataMatch> m;
    if (f_->with_data()) m = f_->post(mb, true, data, nullptr, bytes);
    sg4::CommPtr c = mb->put_async(&g_dummy_payload, bytes);
    return std::make_unique<SimRequest>(f_, mb, std::move(c), std::move(m));
  }
  std::unique_ptr<Request> irecv(int peer, void* data, size_t bytes, int tag) override {
    sg4::Mailbox* mb = f_->mailbox(group_, members_[static_cast<size_t>(peer)], me(), tag);
    std::shared_ptr<DataMatch> m;
    if (f_->with_data()) m = f_->post(mb, false, nullptr, data, bytes);
    sg4::CommPtr c = mb->get_async<void>(&sink_);
    return std::make_unique<SimRequest>(f_, mb, std::move(c), std::move(m));
  }
  std::unique_ptr<Transport> split(int color, int key) override {
    int new_group = 0;
    std::vector<int> m = f_->split(group_, split_seq_++, members_.size(), me(), color, key, &new_group);
    if (color < 0) return nullptr;
    const int idx = static_cast<int>(std::find(m.begin(), m.end(), me()) - m.begin());
    return std::make_unique<SimTransport>(f_, new_group, std::move(m), idx);
  }
  std::string name() const override { return "simgrid"; }

 private:
  int me() const { return members_[static_cast<size_t>(rank_)]; }
  std::shared_ptr<SimFabric> f_;
  int group_;
  std::vector<int> members_;
  int rank_;
  int split_seq_ = 0;
  void* sink_ = nullptr;  // where SimGrid writes the (meaningless) payload pointer
};

}  // namespace

std::unique_ptr<Transport> make_sim_transport(std::shared_ptr<SimFabric> fabric, int rank) {
  std::vector<int> members(static_cast<size_t>(fabric->size()));
  for (int r = 0; r < fabric->size(); ++r) members[static_cast<size_t>(r)] = r;
  return std::make_unique<SimTransport>(std::move(fabric), 0, std::move(members), rank);
}

}  // namespace hvd::sim
