// Transport over SimGrid. A message (group, src, dst, tag) travels through the mailbox
// of its channel, so SimGrid matches sends and receives FIFO per key exactly as MPI
// does; the transfer is one SimGrid flow from the sender's host to the receiver's,
// sharing every link of the route with the flows in flight (rendezvous: it starts when
// both sides are posted). Bytes are copied when the two sides match, in the same FIFO
// order (the sender's buffer is stable until its request completes and the receiver
// reads it only after, so that is as good as at arrival) -- unless either buffer is
// phantom: then only the flow's size travels.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <simgrid/Exception.hpp>

#include "model/seams.h"

namespace hvd::sim {

SimFabric::SimFabric(std::vector<sg4::Host*> hosts, std::vector<int> node)
    : hosts_(std::move(hosts)), node_(std::move(node)) {}

namespace {

// factor(n) of a [bytes, factor] table: log-size interpolation, flat beyond the ends.
double factor_at(const std::vector<std::pair<double, double>>& f, double n) {
  if (f.empty()) return 1.0;
  if (n <= f.front().first) return f.front().second;
  if (n >= f.back().first) return f.back().second;
  size_t i = 1;
  while (f[i].first < n) ++i;
  const double x =
      (std::log(n) - std::log(f[i - 1].first)) / (std::log(f[i].first) - std::log(f[i - 1].first));
  return f[i - 1].second + x * (f[i].second - f[i - 1].second);
}

constexpr uintptr_t kCacheBlock = 64 << 10;

}  // namespace

double SimFabric::wire_bytes(int a, int b, size_t bytes, double hot) const {
  const int k = node_of(a) == node_of(b) ? 0 : 1;
  const double n = static_cast<double>(bytes);
  if (bytes == 0) return n;
  const double f_hot = factor_at(bandwidth_factors[k], n);
  if (cache_bytes <= 0 || bandwidth_factors_cold[k].empty()) return n * f_hot;
  return n * (hot * f_hot + (1 - hot) * factor_at(bandwidth_factors_cold[k], n));
}

double SimFabric::touch(int r, IoSpan pieces) {
  if (cache_bytes <= 0) return 1.0;
  if (caches_.size() < hosts_.size()) caches_.resize(hosts_.size());
  RankCache& c = caches_[static_cast<size_t>(r)];
  double total = 0, hot = 0;
  for (const IoPiece& p : pieces) {
    total += static_cast<double>(p.bytes);
    if (!p.data || !p.bytes) continue;  // no address: never seen before
    const uintptr_t a = reinterpret_cast<uintptr_t>(p.data), end = a + p.bytes;
    for (uintptr_t b = a / kCacheBlock; b <= (end - 1) / kCacheBlock; ++b) {
      const uintptr_t lo = std::max(a, b * kCacheBlock), hi = std::min(end, (b + 1) * kCacheBlock);
      auto it = c.blocks.find(b);
      if (it != c.blocks.end()) {
        const double distance = c.touched - it->second;
        if (!cache_curve.empty())
          hot += static_cast<double>(hi - lo) * factor_at(cache_curve, std::max(1.0, distance));
        else if (distance < cache_bytes)
          hot += static_cast<double>(hi - lo);
      }
      c.blocks[b] = c.touched + total;
    }
  }
  c.touched += total;
  return total > 0 ? hot / total : 1.0;
}

Channel* SimFabric::channel(int group, int src, int dst, int tag) {
  const uint64_t key = (static_cast<uint64_t>(group) << 44) | (static_cast<uint64_t>(src) << 24) |
                       (static_cast<uint64_t>(dst) << 4) | static_cast<uint64_t>(tag & 15);
  auto it = channels_.find(key);
  if (it != channels_.end()) return it->second.get();
  // Mailbox::by_name may let other actors run: create first, then publish.
  sg4::Mailbox* mb = sg4::Mailbox::by_name(std::string("g").append(std::to_string(group)).append(":").append(std::to_string(src)).append(">").append(std::to_string(dst)).append(":").append(std::to_string(tag)));
  auto& slot = channels_[key];
  if (!slot) {
    slot = std::make_unique<Channel>();
    slot->mailbox = mb;
  }
  return slot.get();
}

const SimFabric::Route& SimFabric::route(int src, int dst) {
  const uint64_t key = (static_cast<uint64_t>(src) << 32) | static_cast<uint32_t>(dst);
  auto it = routes_.find(key);
  if (it != routes_.end()) return it->second;
  std::vector<sg4::Link*> links;
  double lat = 0;
  host(src)->route_to(host(dst), links, &lat);
  Route r;
  r.latency = lat * latency_factor;
  r.bandwidth = std::numeric_limits<double>::infinity();
  for (const sg4::Link* l : links) r.bandwidth = std::min(r.bandwidth, l->get_bandwidth() * bandwidth_factor);
  if (const double cap = flow_cap(src, dst); cap > 0) r.bandwidth = std::min(r.bandwidth, cap);
  return routes_[key] = r;
}

// The first `n` bytes of a send's message (its pieces, one after the other, or its
// bytes) to `dst`; nothing when the send is phantom.
static void copy_message(const DataMatch& s, void* dst, size_t n) {
  if (!s.parts) {
    if (!is_phantom(s.src)) std::memcpy(dst, s.src, n);
    return;
  }
  auto* out = static_cast<uint8_t*>(dst);
  for (const IoPiece* p = s.parts; p != s.parts + s.nparts; ++p) {
    const size_t k = std::min(p->bytes, n);
    if (k) std::memcpy(out, p->data, k);
    out += k;
    n -= k;
  }
}

void SimFabric::post(Channel* c, bool is_send, DataMatch* m) {
  auto& others = is_send ? c->recvs : c->sends;
  if (others.empty()) {
    (is_send ? c->sends : c->recvs).push_back(m);
    return;
  }
  DataMatch* o = others.pop_front();
  DataMatch& s = is_send ? *m : *o;
  DataMatch& r = is_send ? *o : *m;
  if (r.sink) {  // a sized receive takes the message's size
    r.dst = r.sink->room(s.bytes);
    r.bytes = r.dst || !s.bytes ? s.bytes : 0;
  }
  const size_t n = std::min(s.bytes, r.bytes);
  if (n && !is_phantom(r.dst)) copy_message(s, r.dst, n);
  s.matched = r.matched = true;
  s.mismatch = r.mismatch = s.bytes != r.bytes;
  if (!is_send && o->eager) delete o;  // a buffered eager send: its job is done
}

void SimFabric::withdraw(Channel* c, DataMatch* m) {
  c->sends.remove(m);
  c->recvs.remove(m);
}

const SimFabric::Members& SimFabric::world_members() {
  if (!world_) {
    auto all = std::make_shared<std::vector<int>>(hosts_.size());
    for (size_t r = 0; r < all->size(); ++r) (*all)[r] = static_cast<int>(r);
    world_ = std::move(all);
  }
  return world_;
}

std::shared_ptr<const SimFabric::RingPrefix> SimFabric::ring_prefix(int group, const std::vector<int>& members) {
  auto& slot = rings_[group];
  if (slot) return slot;
  const size_t p = members.size();
  auto pre = std::make_shared<RingPrefix>();
  pre->lat.assign(p + 1, 0);
  pre->spb.assign(p + 1, 0);
  for (size_t x = 0; x < p; ++x) {
    const Route& r = route(members[(x + p - 1) % p], members[x]);
    pre->lat[x + 1] = pre->lat[x] + r.latency;
    pre->spb[x + 1] = pre->spb[x] + 1 / r.bandwidth;
    const std::pair<double, double> hop{r.latency, 1 / r.bandwidth};
    if (std::find(pre->hop_classes.begin(), pre->hop_classes.end(), hop) == pre->hop_classes.end())
      pre->hop_classes.push_back(hop);
  }
  slot = std::move(pre);
  return slot;
}

std::shared_ptr<const GroupLayout> SimFabric::group_layout(int group, const std::vector<int>& members) {
  auto& slot = layouts_[group];
  if (slot) return slot;
  auto l = std::make_shared<GroupLayout>();
  const size_t n = members.size();
  std::map<int, int> per_node;  // node -> members on it
  l->local_rank.resize(n);
  for (size_t i = 0; i < n; ++i) l->local_rank[i] = per_node[node_of(members[i])]++;
  std::map<int, int> cross;  // node -> its index among the group's nodes, in node order
  for (const auto& [node, count] : per_node) cross.emplace(node, static_cast<int>(cross.size()));
  l->cross_rank.resize(n);
  l->local_size.resize(n);
  for (size_t i = 0; i < n; ++i) {
    l->cross_rank[i] = cross[node_of(members[i])];
    l->local_size[i] = per_node[node_of(members[i])];
  }
  l->cross_size = static_cast<int>(per_node.size());
  l->homogeneous = true;
  for (const auto& [node, count] : per_node) l->homogeneous = l->homogeneous && count == per_node.begin()->second;
  slot = std::move(l);
  return slot;
}

SimFabric::Members SimFabric::split(int group, int seq, size_t members, int me, int color, int key,
                                    int* new_group) {
  // Creating S4U objects is a simcall that may let other actors run: build the state
  // first, then publish it without yielding in between.
  auto fresh = std::make_unique<SplitState>();
  auto& slot = splits_[{group, seq}];
  if (!slot) slot = std::move(fresh);
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
  if (color < 0) return nullptr;
  *new_group = st.groups[color];
  Members& shared = st.members[color];  // the first member of the color builds the list
  if (!shared) {
    std::vector<std::pair<int, int>> order;  // (key, world rank)
    for (const auto& [rank, ck] : st.entries)
      if (ck.first == color) order.emplace_back(ck.second, rank);
    std::sort(order.begin(), order.end());
    auto out = std::make_shared<std::vector<int>>();
    for (const auto& kr : order) out->push_back(kr.second);
    shared = std::move(out);
  }
  return shared;
}

namespace {

int g_dummy_payload = 0;  // SimGrid needs a non-null payload pointer
void* g_payload_sink = nullptr;  // where SimGrid writes it on the receiving side

class SimRequest final : public Request {
 public:
  /// `wire_bytes`: what the flow carries (size-dependent bandwidth factors). `path_s`: a
  /// train's last message arrives no earlier than this after the flow started.
  /// `rate`: the flow's ceiling, bytes/s (0: none; see SimFabric::flow_cap).
  SimRequest(Channel* c, bool is_send, const void* src, void* dst, size_t bytes,
             double wire_bytes = 0, DeviceClock* clock = nullptr, double path_s = 0,
             double rate = 0, SizedSink* sink = nullptr, std::vector<IoPiece> parts = {})
      : ch_(c), clock_(clock), path_(path_s), parts_(std::move(parts)) {
    if (!parts_.empty()) {  // the request keeps them: the receive may match much later
      m_.parts = parts_.data();
      m_.nparts = parts_.size();
    }
    m_.src = src;
    m_.dst = dst;
    m_.bytes = bytes;
    m_.sink = sink;
    SimFabric::post(c, is_send, &m_);
    // The cap goes on both sides: SimGrid keeps whichever side was posted first.
    if (!is_send && rate > 0) {
      comm_ = c->mailbox->get_init()->set_dst_data(&g_payload_sink, sizeof(void*));
      comm_->set_rate(rate);
      comm_->start();
    } else if (!is_send) {
      comm_ = c->mailbox->get_async<void>(&g_payload_sink);
    } else if (rate > 0) {
      comm_ = c->mailbox->put_init(&g_dummy_payload, static_cast<uint64_t>(std::max(wire_bytes, double(bytes))));
      comm_->set_rate(rate);
      comm_->start();
    } else {
      comm_ = c->mailbox->put_async(&g_dummy_payload, std::max(wire_bytes, double(bytes)));
    }
  }
  ~SimRequest() override {
    if (done_) return;
    // Abandoned before completion (its owner timed out): withdraw it.
    if (!m_.matched) SimFabric::withdraw(ch_, &m_);
    try {
      comm_->cancel();
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
      if (done_) arrived();
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
      arrived();
    }
    if (!failed_.empty()) return Status::Internal("simgrid transport: " + failed_);
    if (m_.mismatch) return Status::Internal("simgrid transport: message size mismatch");
    return Status::OK();
  }

 private:
  // A train's last message may come later than its bytes: hold the clock until then.
  void arrived() {
    if (path_ > 0 && failed_.empty()) clock_->hold_until(comm_->get_start_time() + path_);
    path_ = 0;
  }
  Channel* ch_;
  DeviceClock* clock_;
  double path_;
  std::vector<IoPiece> parts_;  // a send's pieces (rendezvous)
  DataMatch m_;
  sg4::CommPtr comm_;
  bool done_ = false;
  std::string failed_;
};

// Total bytes of `pieces`; *phantom: whether a non-empty piece has no storage (a phantom
// device's address), which makes the whole message phantom.
size_t sim_bytes(IoSpan pieces, bool* phantom) {
  size_t n = 0;
  for (const IoPiece& p : pieces) {
    n += p.bytes;
    *phantom = *phantom || (p.bytes && is_phantom(p.data));
  }
  return n;
}

// A rank's view of one group. It is its own BlockingReceive (control messages: posted and
// waited for with one engine call) and, when its world moves no bytes, its own
// TimingCollectives (a ring allreduce as trains, timing_ring.cc) over its TrainLinks.
class SimTransport final : public Transport, public BlockingReceive, public TimingCollectives, public TrainLinks {
 public:
  SimTransport(std::shared_ptr<SimFabric> f, int group, SimFabric::Members members, int rank,
               DeviceClock* clock)
      : f_(std::move(f)), group_(group), members_(std::move(members)), rank_(rank), clock_(clock) {
    // A group's layout never changes: built once per group, shared by its transports.
    share_layout(f_->group_layout(group_, *members_));
    if (f_->nccl) nccl_ = make_sim_nccl(f_, group_, members_, clock_);
  }
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(members_->size()); }
  int node_of(int r) const override { return f_->node_of(member(r)); }
  std::string name() const override { return "simgrid"; }
  std::unique_ptr<Transport> split(int color, int key) override {
    int new_group = 0;
    SimFabric::Members m = f_->split(group_, split_seq_++, members_->size(), me(), color, key, &new_group);
    if (color < 0) return nullptr;
    const int idx = static_cast<int>(std::find(m->begin(), m->end(), me()) - m->begin());
    return std::make_unique<SimTransport>(f_, new_group, std::move(m), idx, clock_);
  }
  // One piece goes as it is. Several are one message: phantom as a whole if any piece is,
  // otherwise copied into the receiver's buffer one after the other when the message
  // matches (the control plane's gather forwards its children's blobs that way, without
  // concatenating them).
  std::unique_ptr<Request> isendv(int peer, IoSpan pieces, int tag) override {
    bool phantom = false;
    const size_t n = sim_bytes(pieces, &phantom);
    clock_->before_post();
    f_->messages[tag & 7] += 1;
    f_->bytes[tag & 7] += static_cast<double>(n);
    const double hot = touch(tag, pieces);
    if (pieces.size() == 1) return post_send(peer, pieces[0].data, n, tag, hot);
    return phantom ? post_send(peer, nullptr, n, tag, hot) : post_send(peer, nullptr, n, tag, hot, pieces);
  }
  // A sized receive takes the sender's size when the channel matches it (DataMatch::sink),
  // as MPI_Improbe would. Several real pieces are received through a staging buffer.
  std::unique_ptr<Request> irecv_into(int peer, const RecvInto& into, int tag) override {
    if (!into.sink && into.pieces.size() != 1) {
      bool phantom = false;
      const size_t n = sim_bytes(into.pieces, &phantom);
      if (!phantom) return recv_packed(into.pieces, [&](void* d, size_t k) { return irecv(peer, d, k, tag); });
      clock_->before_post();
      (void)touch(tag, into.pieces);
      return std::make_unique<SimRequest>(channel(peer, tag, false), false, nullptr, nullptr, n, 0, nullptr, 0,
                                          f_->flow_cap(member(peer), me()));
    }
    clock_->before_post();
    if (into.sink)
      return std::make_unique<SimRequest>(channel(peer, tag, false), false, nullptr, nullptr, 0, 0, nullptr, 0,
                                          f_->flow_cap(member(peer), me()), into.sink);
    (void)touch(tag, into.pieces);
    return std::make_unique<SimRequest>(channel(peer, tag, false), false, nullptr, into.pieces[0].data,
                                        into.pieces[0].bytes, 0, nullptr, 0, f_->flow_cap(member(peer), me()));
  }
  BlockingReceive* blocking() override { return this; }
  NativeCollectives* native() override { return nccl_.get(); }
  TimingCollectives* timing() override { return f_->timing_transfers > 0 ? this : nullptr; }

  // BlockingReceive: a receive that is not started yet is posted and waited for by one
  // simcall (the control plane's receives, two per rank and round).
  Status recv_until(int peer, const RecvInto& into, int tag, double deadline_s,
                    std::unique_ptr<Request>* pending) override {
    if (!into.sink && into.pieces.size() != 1) {  // scattered: rare, in two steps
      auto r = irecv_into(peer, into, tag);
      Status s = r->wait(deadline_s);
      if (s.code() == StatusCode::kTimeout) *pending = std::move(r);
      return s;
    }
    clock_->before_post();
    if (!into.sink) (void)touch(tag, into.pieces);
    Channel* c = channel(peer, tag, false);
    DataMatch m;
    m.dst = into.sink ? nullptr : into.pieces[0].data;
    m.bytes = into.sink ? 0 : into.pieces[0].bytes;
    m.sink = into.sink;
    SimFabric::post(c, false, &m);
    sg4::CommPtr comm = c->mailbox->get_init()->set_dst_data(&g_payload_sink, sizeof(void*));
    if (const double rate = f_->flow_cap(member(peer), me()); rate > 0) comm->set_rate(rate);
    try {
      comm->wait_for(deadline_s > 1e15 ? -1.0 : std::max(0.0, deadline_s - sg4::Engine::get_clock()));
    } catch (const simgrid::TimeoutException&) {
      // Not in by the deadline; SimGrid dropped the receive. Unless its bytes had already
      // started to flow (a control message slower than the stall warning time), post it
      // again, for the caller to wait on further.
      if (m.matched) return Status::Internal("simgrid transport: a control message outlived the stall deadline");
      SimFabric::withdraw(c, &m);
      *pending = irecv_into(peer, into, tag);
      return Status::Timeout("simgrid transport: transfer did not complete in time");
    } catch (const simgrid::Exception& e) {
      if (!m.matched) SimFabric::withdraw(c, &m);
      return Status::Internal(std::string("simgrid transport: ") + e.what());
    }
    if (m.mismatch) return Status::Internal("simgrid transport: message size mismatch");
    return Status::OK();
  }

  // TimingCollectives.
  bool ring_allreduce(const RingAllreduce& a, Device& dev, Status* done) override {
    return train_ring_allreduce(*this, a, dev, done);
  }

  // TrainLinks.
  Transport& group() override { return *this; }
  int64_t transfers() const override { return f_->timing_transfers; }
  // Prefix sums over the ring (latency and seconds per byte of the hop into each member),
  // built once per group and shared by its members: a train's path costs O(1).
  double ring_hops(int first, int64_t count, size_t bytes) override {
    const int p = size();
    if (!ring_) ring_ = f_->ring_prefix(group_, *members_);
    const std::vector<double>& lat_pre = ring_->lat;
    const std::vector<double>& spb_pre = ring_->spb;
    auto range = [&](const std::vector<double>& pre, int a, int64_t n) {  // [a, a+n), n <= p
      const int64_t b = a + n;
      return b <= p ? pre[static_cast<size_t>(b)] - pre[static_cast<size_t>(a)]
                    : pre[static_cast<size_t>(p)] - pre[static_cast<size_t>(a)] + pre[static_cast<size_t>(b - p)];
    };
    const int a = ((first % p) + p) % p;
    const int64_t laps = count / p, rest = count % p;
    const double lat = laps * lat_pre[static_cast<size_t>(p)] + range(lat_pre, a, rest);
    const double spb = laps * spb_pre[static_cast<size_t>(p)] + range(spb_pre, a, rest);
    return lat + spb * static_cast<double>(bytes);
  }
  double ring_max_hop(size_t bytes) override {
    if (!ring_) ring_ = f_->ring_prefix(group_, *members_);
    double worst = 0;
    for (const auto& [lat, spb] : ring_->hop_classes) worst = std::max(worst, lat + spb * static_cast<double>(bytes));
    return worst;
  }
  std::unique_ptr<Request> isend_train(int peer, size_t bytes, int tag) override {
    return isend(peer, nullptr, bytes, tag);
  }
  // Posting a receive sends nothing: it need not wait for pending device work (a train's
  // receiver posts the next one as soon as the previous transfer is through).
  std::unique_ptr<Request> irecv_train(int peer, size_t bytes, double path_s, int tag) override {
    return std::make_unique<SimRequest>(channel(peer, tag, false), false, nullptr, nullptr, bytes, 0, clock_,
                                        path_s, f_->flow_cap(member(peer), me()));
  }

 private:
  // `parts`, when not empty, are the message's bytes in pieces; `data` is then unused.
  std::unique_ptr<Request> post_send(int peer, const void* data, size_t bytes, int tag, double hot,
                                     IoSpan parts = {}) {
    const double wire = f_->wire_bytes(me(), member(peer), bytes, hot);
    Channel* c = channel(peer, tag, true);
    const double cap = f_->flow_cap(me(), member(peer));
    if (bytes > f_->eager_limit)
      return std::make_unique<SimRequest>(c, true, data, nullptr, bytes, wire, nullptr, 0, cap, nullptr,
                                          std::vector<IoPiece>(parts.begin(), parts.end()));
    auto m = std::make_unique<DataMatch>();
    m->src = data;
    if (!parts.empty()) {  // read only here: copied below unless the receive took them at once
      m->parts = parts.data();
      m->nparts = parts.size();
    }
    m->bytes = bytes;
    m->eager = true;
    SimFabric::post(c, true, m.get());
    if (!m->matched) {  // queued: buffer the bytes, the channel owns it from here
      if (bytes && (m->parts || !is_phantom(data))) {
        m->copy.reset(new uint8_t[bytes]);  // not zero-filled: written at once
        copy_message(*m, m->copy.get(), bytes);
        m->src = m->copy.get();
      }
      m->parts = nullptr;
      m->nparts = 0;
      (void)m.release();
    }
    // Eager: complete from the start. The flow goes to SimGrid detached; the bytes went to
    // the receiver or, if it has not posted yet, into the buffer the channel now owns.
    sg4::CommPtr eager = c->mailbox->put_init(&g_dummy_payload, static_cast<uint64_t>(std::max(wire, double(bytes))));
    if (cap > 0) eager->set_rate(cap);
    eager->detach();
    return completed_request();
  }

  // The cache model (SimFabric::touch) follows tensor data. Control messages are the
  // runtime's own bookkeeping in host memory: they neither touch nor consult it, and count
  // as in cache. (Its blocks are keyed by address: a control buffer's place on the heap,
  // which differs from run to run, would otherwise decide whether the next blob is hot.)
  double touch(int tag, IoSpan pieces) {
    return tag == kTagControl ? 1.0 : f_->touch(me(), pieces);
  }
  int me() const { return member(rank_); }
  int member(int r) const { return (*members_)[static_cast<size_t>(r)]; }
  // Channels this rank uses, cached by (peer, tag, direction).
  Channel* channel(int peer, int tag, bool out) {
    const uint32_t key = (static_cast<uint32_t>(peer) << 5) | (static_cast<uint32_t>(tag & 15) << 1) | (out ? 1u : 0u);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    const int other = member(peer);
    Channel* c = out ? f_->channel(group_, me(), other, tag) : f_->channel(group_, other, me(), tag);
    cache_.emplace(key, c);
    return c;
  }
  std::shared_ptr<SimFabric> f_;
  int group_;
  SimFabric::Members members_;
  int rank_;
  DeviceClock* clock_;
  int split_seq_ = 0;
  std::unordered_map<uint32_t, Channel*> cache_;
  std::shared_ptr<const SimFabric::RingPrefix> ring_;  // prefix sums for ring_hops
  std::unique_ptr<NativeCollectives> nccl_;            // NCCL's collectives (SimFabric::nccl)
};

}  // namespace

std::unique_ptr<Transport> make_sim_transport(std::shared_ptr<SimFabric> fabric, int rank,
                                              DeviceClock* clock) {
  SimFabric::Members members = fabric->world_members();
  return std::make_unique<SimTransport>(std::move(fabric), 0, std::move(members), rank, clock);
}

}  // namespace hvd::sim
