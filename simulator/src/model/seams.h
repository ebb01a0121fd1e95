// The SimGrid implementations of the three seams (internal to libhvdsim).
#pragma once

#include <simgrid/s4u.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "hvd/device.h"
#include "hvd/platform.h"
#include "hvd/sim/cluster.h"
#include "hvd/sim/nccl_model.h"
#include "hvd/transport.h"

namespace hvd::sim {

namespace sg4 = simgrid::s4u;

/// Device work a rank's actor has issued but not yet waited out. Device operations are
/// charged here instead of each costing a sleep; the actor's own clock (Platform::now())
/// includes them, waiting absorbs them, and they are slept off before the actor posts a
/// message once they exceed `tolerance` (so no message leaves more than `tolerance`
/// early, and no time is ever lost). Tolerance 0 makes every charge an immediate sleep.
class DeviceClock {
 public:
  explicit DeviceClock(double tolerance) : tolerance_(tolerance) {}
  /// Adds `seconds` of device work for the calling actor.
  void charge(double seconds);
  /// The calling actor is not ready before simulated time `t` (an arrival still in flight):
  /// unlike charge(), this overlaps with device work already pending.
  void hold_until(double t);
  /// The calling actor's time: the simulated clock, or later while its work is pending.
  double now() const;
  /// Before a message is posted: sleeps the pending work off if above the tolerance.
  void before_post();
  /// Sleeps `seconds` after the pending work (Platform::sleep_for / compute).
  void sleep_after(double seconds);

 private:
  bool mine() const { return owner_ && owner_ == sg4::Actor::self(); }
  double tolerance_;
  sg4::Actor* owner_ = nullptr;  // the actor whose device work is tracked (the first to charge)
  double ready_at_ = 0;          // simulated time at which that work completes
};

/// The simulated clock and S4U concurrency of one rank (device work from `clock`).
std::unique_ptr<Platform> make_sim_platform(DeviceClock* clock, double wakeup_latency = 0);

/// One side of a message, waiting for its partner (matched FIFO per channel, as SimGrid
/// matches the mailbox).
struct DataMatch {
  const void* src = nullptr;  ///< sender's bytes
  /// Or the sender's pieces, in order (Transport::isendv): copied one after the other.
  const IoPiece* parts = nullptr;
  size_t nparts = 0;
  void* dst = nullptr;        ///< receiver's buffer
  size_t bytes = 0;           ///< this side's size
  bool matched = false;       ///< partner found and bytes copied
  bool mismatch = false;      ///< sizes differed
  /// An eager send queued before its receive: the channel owns it (and `copy`, its bytes)
  /// and frees it once matched.
  bool eager = false;
  std::unique_ptr<uint8_t[]> copy;
  /// A receive of any size (RecvInto::sink): on match, `dst` and `bytes` come
  /// from sink->room(the sender's size).
  SizedSink* sink = nullptr;
  DataMatch* next = nullptr;  ///< the next side in its channel's queue
};

/// A first-in-first-out queue of unmatched sides, linked through DataMatch::next (an empty
/// std::deque allocates ~600 bytes: two per channel were ~100 MB at 4,096 ranks).
class MatchQueue {
 public:
  bool empty() const { return !head_; }
  void push_back(DataMatch* m) {
    m->next = nullptr;
    (tail_ ? tail_->next : head_) = m;
    tail_ = m;
  }
  DataMatch* pop_front() {
    DataMatch* m = head_;
    head_ = m->next;
    if (!head_) tail_ = nullptr;
    m->next = nullptr;
    return m;
  }
  /// Removes `m` if queued.
  void remove(DataMatch* m) {
    DataMatch* prev = nullptr;
    for (DataMatch* x = head_; x; prev = x, x = x->next) {
      if (x != m) continue;
      (prev ? prev->next : head_) = x->next;
      if (tail_ == x) tail_ = prev;
      x->next = nullptr;
      return;
    }
  }

 private:
  DataMatch* head_ = nullptr;
  DataMatch* tail_ = nullptr;
};

/// Messages (group, src, dst, tag): their SimGrid mailbox and the unmatched sides.
struct Channel {
  sg4::Mailbox* mailbox = nullptr;   ///< where SimGrid matches the flows
  MatchQueue sends;                  ///< posted sends without a receive yet
  MatchQueue recvs;                  ///< posted receives without a send yet
  Channel() = default;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel() {
    while (!sends.empty()) {
      DataMatch* m = sends.pop_front();
      if (m->eager) delete m;
    }
  }
};

struct SimNccl;

/// State shared by the transports of every rank of one world: hosts, nodes, mailboxes,
/// process-set splits and the payload matching.
class SimFabric {
 public:
  SimFabric(std::vector<sg4::Host*> hosts, std::vector<int> node);
  /// Host of world rank r.
  sg4::Host* host(int r) const { return hosts_[static_cast<size_t>(r)]; }
  /// Number of world ranks.
  int size() const { return static_cast<int>(hosts_.size()); }
  /// Node index of world rank r.
  int node_of(int r) const { return node_[static_cast<size_t>(r)]; }
  /// Bytes a message of `bytes` from world rank a to b puts on the wire (size factors;
  /// `hot`: the fraction of its bytes in a's cache).
  double wire_bytes(int a, int b, size_t bytes, double hot = 1.0) const;
  /// Records that world rank r touches `pieces`; returns the fraction that was in its cache.
  double touch(int r, IoSpan pieces);
  /// SimModelSpec::bandwidth_factors, bandwidth_factors_cold (0: within a server, 1: across).
  std::vector<std::pair<double, double>> bandwidth_factors[2], bandwidth_factors_cold[2];
  /// SimModelSpec::cache_bytes.
  double cache_bytes = 0;
  /// SimModelSpec::cache_curve.
  std::vector<std::pair<double, double>> cache_curve;
  /// The channel of messages (group, src, dst, tag) (world ranks).
  Channel* channel(int group, int src, int dst, int tag);
  /// Registers one side of a message; on match copies the bytes when both sides are real
  /// memory (phantom buffers carry none).
  static void post(Channel* c, bool is_send, DataMatch* m);
  /// Withdraws an unmatched side.
  static void withdraw(Channel* c, DataMatch* m);
  /// An idle route from world rank `src` to `dst`: latency (link latencies times the
  /// model's latency factor) and bottleneck bandwidth (times the bandwidth factor).
  struct Route {
    double latency = 0, bandwidth = 0;
  };
  const Route& route(int src, int dst);
  /// Sends of at most this many bytes are eager, as in MPI: the sender's request completes
  /// at once (the bytes are buffered) and only the receiver waits for the flow.
  size_t eager_limit = 12 << 10;
  /// TrainLinks::transfers() of every transport of this world (0: real bytes, and no
  /// Transport::timing()).
  int64_t timing_transfers = 0;
  /// The ceiling of one connection between two servers, bytes/s (0: none): every
  /// inter-server flow is capped at it (NetworkSpec::connection_rate).
  double connection_rate = 0;
  /// The rate cap of a flow from world rank a to b (0: none).
  double flow_cap(int a, int b) const {
    return connection_rate > 0 && node_of(a) != node_of(b) ? connection_rate : 0;
  }
  /// The network model's latency and bandwidth factors (CM02: 1 and 1).
  double latency_factor = 1, bandwidth_factor = 1;
  /// Messages sent so far, per tag (index = tag, capped at 7).
  int64_t messages[8] = {};
  /// Bytes sent so far, per tag.
  double bytes[8] = {};
  /// Members (world ranks, in order) of a group, shared by every member's transport: a
  /// list per rank would make the world O(np^2) in memory.
  using Members = std::shared_ptr<const std::vector<int>>;
  /// The world group's members, 0 .. size()-1.
  const Members& world_members();
  /// Prefix sums over a group's ring (x = 1 .. size: latency and seconds per byte of the
  /// hops into members 0 .. x-1, each from its left neighbour), for TrainLinks::
  /// ring_hops. Built once per group and shared by its transports (a copy per rank
  /// was 16 bytes x np on every rank: 256 MiB at 4,096 ranks).
  struct RingPrefix {
    std::vector<double> lat, spb;
    /// The distinct (latency, seconds per byte) of the ring's hops (a few classes: inside a
    /// server, across the network), for TrainLinks::ring_max_hop.
    std::vector<std::pair<double, double>> hop_classes;
  };
  std::shared_ptr<const RingPrefix> ring_prefix(int group, const std::vector<int>& members);
  /// Where a group's members sit (Transport::layout()), built once per group and shared
  /// by its transports (each rank building its own was O(np^2) at start-up).
  std::shared_ptr<const GroupLayout> group_layout(int group, const std::vector<int>& members);
  /// NCCL's machine and algorithm when GPU collectives run on NCCL (null: they do not).
  std::shared_ptr<const SimNccl> nccl;
  /// Blocks the calling actor until all `members` of `group` called it for the same time
  /// (the `seq`-th rendezvous of the group); costs no simulated time.
  void rendezvous(int group, int64_t seq, size_t members);
  /// Collective split of `group` (see Transport::split); returns the new group's members
  /// and sets its id, or null for color < 0.
  Members split(int group, int seq, size_t members, int me, int color, int key, int* new_group);

 private:
  struct RankCache {
    double touched = 0;                            // bytes touched so far
    std::unordered_map<uintptr_t, double> blocks;  // block -> `touched` at its last touch
  };
  std::vector<RankCache> caches_;
  struct SplitState {
    std::map<int, std::pair<int, int>> entries;  // world rank -> (color, key)
    std::map<int, int> groups;                   // color -> group id
    std::map<int, Members> members;              // color -> members (built by the first)
    sg4::MutexPtr mu = sg4::Mutex::create();
    sg4::ConditionVariablePtr cv = sg4::ConditionVariable::create();
  };
  std::vector<sg4::Host*> hosts_;
  std::vector<int> node_;
  Members world_;
  std::unordered_map<uint64_t, std::unique_ptr<Channel>> channels_;
  std::unordered_map<uint64_t, Route> routes_;
  std::map<std::pair<int, int>, std::unique_ptr<SplitState>> splits_;
  struct Rendezvous {
    size_t arrived = 0, left = 0;
    sg4::MutexPtr mu = sg4::Mutex::create();
    sg4::ConditionVariablePtr cv = sg4::ConditionVariable::create();
  };
  std::map<std::pair<int, int64_t>, std::unique_ptr<Rendezvous>> rendezvous_;
  std::unordered_map<int, std::shared_ptr<const RingPrefix>> rings_;  // group -> prefix sums
  std::unordered_map<int, std::shared_ptr<const GroupLayout>> layouts_;  // group -> layout
  int next_group_ = 1;
};

/// Timing-only trains over the links of one group (the simulator's side of
/// Transport::timing()): a long sequence of messages to one peer goes as about
/// transfers() transfers. SimGrid still moves every train as a flow sharing the links of
/// its route. Peers and members are ranks of the group.
class TrainLinks {
 public:
  virtual ~TrainLinks() = default;
  /// The group (rank, size, and the messages a train ring falls back to).
  virtual Transport& group() = 0;
  /// N > 0: a long sequence of messages to one peer may go as about N transfers.
  virtual int64_t transfers() const = 0;
  /// Sum of the idle-network times of one `bytes` message over the hops into the members
  /// x = first, first+1, ..., first+count-1 (modulo the group size), each from x-1:
  /// latency plus bytes over the route's bottleneck bandwidth.
  virtual double ring_hops(int first, int64_t count, size_t bytes) = 0;
  /// The slowest of those hops over all members: the pace of a step-synchronous ring.
  virtual double ring_max_hop(size_t bytes) = 0;
  /// Sends `bytes` of phantom data to `peer` as one transfer (a train of messages).
  virtual std::unique_ptr<Request> isend_train(int peer, size_t bytes, int tag) = 0;
  /// The receiving side of isend_train. The train's messages left the sender one by one as
  /// they became ready there, so its last message arrives no earlier than `path_s` after
  /// the transfer started (nor before the transfer's bytes are in): the request completes
  /// at the later of the two.
  virtual std::unique_ptr<Request> irecv_train(int peer, size_t bytes, double path_s, int tag) = 0;
};

/// The ring allreduce `a` (collectives/allreduce_ring_pipelined.h) timed as trains over
/// `links`, with its device work on `dev`: false, having done nothing, where its messages
/// are too few for trains (then the byte ring times it message by message).
bool train_ring_allreduce(TrainLinks& links, const RingAllreduce& a, Device& dev, Status* done);

/// The machine NCCL sees and NCCL's settings, when GPU collectives run on NCCL
/// (WorldOptions::nccl).
struct SimNccl {
  NcclMachine machine;     ///< the whole cluster; a group narrows nodes and ranks per node
  NcclSettings settings;   ///< NCCL_ALGO, NCCL_PROTO (the channel counts are the machine's)
};

/// NCCL's collectives over one group: every member waits for the others (no simulated
/// time), then for the call's time as the NCCL model gives it.
std::unique_ptr<NativeCollectives> make_sim_nccl(std::shared_ptr<SimFabric> fabric, int group,
                                                 SimFabric::Members members, DeviceClock* clock);

/// The world transport of `rank` over `fabric` (pending device work from `clock`).
std::unique_ptr<Transport> make_sim_transport(std::shared_ptr<SimFabric> fabric, int rank,
                                              DeviceClock* clock);

/// True for null and for addresses a phantom simulated device handed out.
bool is_phantom(const void* p);

/// Records that the rank touches `pieces`; returns the fraction of their bytes that was in
/// its cache (SimFabric::touch of the rank).
using CacheTouch = std::function<double(IoSpan)>;

/// A simulated device: phantom (no storage) unless `with_data`; every memory operation
/// costs bytes / bandwidth of simulated time on the calling actor (blended with the
/// in-cache rate by `touch`'s answer when the cost spec has one).
std::unique_ptr<Device> make_sim_device(DeviceKind kind, const DeviceCostSpec& cost,
                                        bool with_data, DeviceClock* clock,
                                        CacheTouch touch = nullptr);

}  // namespace hvd::sim
