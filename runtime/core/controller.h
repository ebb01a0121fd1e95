// Controller: one process set's negotiation, run once per background cycle on every
// member. Tensors seen before go through the response-cache bit vectors; new ones are
// gathered at the coordinator (rank 0 of the set), which checks that all ranks agree,
// orders what is ready, fuses it and broadcasts the plan. The coordinator also runs the
// stall inspector.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/autotune.h"
#include "core/control_plane.h"
#include "core/logging.h"
#include "core/message.h"
#include "core/response_cache.h"
#include "hvd/config.h"
#include "hvd/device.h"
#include "hvd/platform.h"

namespace hvd {

struct PendingOp;  // core/process_sets.h

/// A tensor this rank submitted, as the runtime holds it (its name is the table's key), for
/// one cycle's negotiation: written straight into the request list when no response cache
/// needs a TensorRequest (enqueue.cc).
struct RequestRef {
  const std::string* name = nullptr;
  const PendingOp* req = nullptr;
  int32_t rank = 0;  ///< the submitting rank, in the process set
  /// The collective.
  OpType op() const;
  /// The TensorRequest it stands for.
  TensorRequest materialize() const;
  /// Appends the bytes write_request(w, materialize()) appends.
  void write(Writer& w) const;
};

/// What every member does next.
struct NegotiationResult {
  std::vector<Response> responses;  ///< in execution order, fused
  bool shutdown = false;            ///< some rank asked to shut down
  int cache_hits = 0;               ///< tensors agreed through the cache this cycle
  int cache_misses = 0;             ///< tensors agreed through the coordinator
  std::optional<Tunables> tunables; ///< autotune: the coordinator's new setting (apply at cycle end)
  /// The eager small allreduce: responses[i] with eager_at[i] >= 0 is already reduced, its
  /// result at eager + eager_at[i] (before postscale); eager_at may be shorter than
  /// responses (the rest: -1).
  const uint8_t* eager = nullptr;  ///< the Controller's buffer: valid until its next negotiate()
  std::vector<int64_t> eager_at;
  /// Tensors completed through the eager path this cycle.
  int eager_tensors = 0;
};

/// Negotiation state of one process set on one rank.
class Controller {
 public:
  /// `fusion_threshold` is read through the pointer each cycle (autotune may change it).
  /// `cpu` reduces the eager small allreduces (null: none).
  Controller(Transport& t, Platform& p, const Config& cfg, const Logger& log, Device* cpu = nullptr);
  /// One cycle: announce `incoming` requests, agree on responses.
  /// The referenced requests stay valid until it returns.
  /// `now`: the platform time the cycle read just before (stall timing).
  StatusOr<NegotiationResult> negotiate(const std::vector<RequestRef>& incoming, bool want_shutdown,
                                        double now);
  /// Coordinator, autotune: send `t` to every member with the next plan (forces a full
  /// round); every member finds it in NegotiationResult::tunables of that cycle.
  void announce(const Tunables& t) { announce_ = t; }
  /// Turns the response cache on or off. Every member must call it at the end of the same
  /// cycle: the cache is emptied and requests waiting on a bit are renegotiated in full.
  void set_cache_enabled(bool on);
  /// A data transfer of this set with `peer` (a rank of the set) timed out: `why`, or the
  /// error naming the rank really gone (ControlPlane::name_gone).
  Status name_gone(const Status& why, int peer) { return cp_.name_gone(why, peer); }

 private:
  // One tensor at the coordinator. Ranks almost always send the same request, so each
  // distinct one (equal but for the rank) is kept once and every rank holds its index:
  // 4 bytes per rank and tensor, not a copy of the request, and completeness is a count.
  struct Pending {
    std::vector<TensorRequest> variants;  // distinct requests (rank: the first sender)
    std::vector<int32_t> by_rank;         // index into variants, -1: not submitted yet
    int present = 0;                      // ranks that submitted
    double first_seen = 0;
    double last_warned = 0;
    const TensorRequest* of(int rank) const {
      const int32_t i = by_rank[static_cast<size_t>(rank)];
      return i < 0 ? nullptr : &variants[static_cast<size_t>(i)];
    }
  };

  void classify(const std::vector<RequestRef>& incoming, double now);
  /// The bit-vector round; returns whether a full round must follow.
  StatusOr<bool> cache_round(bool want_shutdown, double now, NegotiationResult* out);
  /// Whether this rank's cached requests may ride on the bit exchange, and if so their
  /// segments (prescaled inputs, in bit order) in payload->data.
  bool eager_payload(BitsPayload* payload);
  Status full_round(bool want_shutdown, NegotiationResult* out);
  std::vector<uint8_t> coordinate(const Gathered& lists);
  using Slot = std::map<std::string, Pending, std::less<>>::iterator;
  /// One rank's request, read in place. `hint`: the tensor the previous rank asked for at
  /// the same position of its list (ranks usually list the same tensors in the same order:
  /// one name comparison instead of a lookup); updated to this request's tensor.
  void admit(const RequestView& req, int rank, Slot* hint, std::vector<std::string>* ready);
  bool complete(const Pending& p) const;
  Response build_response(const std::string& name, Pending& p);
  void check_stalls(std::vector<Response>* errors);
  bool stall_inspection_due() const;
  double inspect_after() const;  ///< seconds a tensor waits before the inspector sees it
  void remember(const std::vector<Response>& responses);
  int cache_capacity() const { return static_cast<int>(cfg_.cache_capacity); }
  bool cache_on() const { return cache_on_ && cache_.enabled(); }

  Transport& t_;
  Platform& p_;
  const Config& cfg_;
  const Logger& log_;
  Device* cpu_;
  ControlPlane cp_;
  BitsPayload eager_;  // the eager path's running data and callbacks
  std::vector<uint64_t> and_bits_, or_bits_;  // cache_round's vectors, kept between cycles
  ResponseCache cache_;
  bool cache_on_ = true;                // autotune may switch the cache off
  std::optional<Tunables> announce_;    // coordinator: autotune setting to broadcast
  // Rank-side state.
  struct CachedPending {
    RequestRef ref;  // the runtime's request, valid until executed (materialized if it
                     // must be negotiated in full after all)
    double since = 0;
  };
  std::map<int, CachedPending> cached_pending_;  // by bit
  std::vector<TensorRequest> uncached_;
  std::vector<RequestRef> uncached_refs_;  // this cycle's, announced as they are (cache off;
                                           // emptied with its memory after each full round)
  std::vector<int> stale_bits_;  // cache entries whose parameters changed on this rank
  bool joined_here_ = false;     // this rank called join and it has not completed
  bool joined_before_ = false;   // ... and the coordinator has heard of it
  // Coordinator-side state.
  std::map<std::string, Pending, std::less<>> table_;
  std::vector<std::string> arrival_;  // names in first-seen order
  std::set<int> joined_;
  int last_joined_ = -1;
  std::map<int, std::vector<Response>> groups_;  // group id -> ready members
  double last_stall_check_ = 0;
};

/// Checks that all ranks' requests for one tensor agree; "" or Horovod-style message.
std::string mismatch_error(const std::vector<const TensorRequest*>& reqs, int size);

}  // namespace hvd
