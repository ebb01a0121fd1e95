#include "core/controller.h"
#include "core/op_table.h"

#include <algorithm>
#include <bit>
#include <iterator>
#include <sstream>

#include "core/fusion.h"
#include "core/process_sets.h"

namespace hvd {

namespace {

constexpr uint64_t kNothingUncached = 1;
constexpr uint64_t kNoShutdown = 2;
constexpr uint64_t kEagerAttached = 4;  // BitsPayload::flag: the eager small allreduce

std::vector<uint8_t> encode_requests(bool shutdown, const std::vector<TensorRequest>& reqs,
                                     const std::vector<RequestRef>& refs) {
  Writer w;
  w.u8(shutdown ? 1 : 0);
  w.i64(static_cast<int64_t>(reqs.size() + refs.size()));
  for (const auto& r : reqs) write_request(w, r);
  for (const auto& r : refs) r.write(w);
  return std::move(w.bytes());
}

void set_bit(std::vector<uint64_t>& v, size_t word0, int bit) {
  v[word0 + static_cast<size_t>(bit) / 64] |= uint64_t{1} << (bit % 64);
}

// Calls f(bit) for every set bit of v[1 .. words], in increasing order (word by word, so
// an idle cycle with a 1024-entry cache looks at 16 words, not 1024 bits).
template <typename F>
void for_each_set_bit(const std::vector<uint64_t>& v, size_t words, F&& f) {
  for (size_t w = 0; w < words; ++w)
    for (uint64_t x = v[1 + w]; x != 0; x &= x - 1)
      f(static_cast<int>(w * 64 + static_cast<size_t>(std::countr_zero(x))));
}

}  // namespace

Controller::Controller(Transport& t, Platform& p, const Config& cfg, const Logger& log, Device* cpu)
    : t_(t),
      p_(p),
      cfg_(cfg),
      log_(log),
      cpu_(cpu),
      cp_(t, p, log, cfg.stall_check_time_s, cfg.stall_shutdown_time_s),
      cache_(cfg.cache_capacity) {
  eager_.flag = kEagerAttached;
  eager_.bytes_of = [this](int bit) {
    if (bit >= cache_capacity() || !cache_.occupied(bit)) return size_t{0};
    const Response& r = cache_.at(bit);
    return r.counts.empty() ? size_t{0} : static_cast<size_t>(r.counts[0]) * dtype_size(r.dtype);
  };
  eager_.reduce = [this](void* dst, const void* a, const void* b, int bit) {
    const Response& r = cache_.at(bit);
    cpu_->reduce_into(dst, a, b, r.counts[0], r.dtype, r.reduce_op);
  };
}

StatusOr<NegotiationResult> Controller::negotiate(const std::vector<RequestRef>& incoming,
                                                  bool want_shutdown, double now) {
  uncached_refs_.clear();  // a failed round's (the runtime stopped after it)
  classify(incoming, now);
  NegotiationResult out;
  bool full = true;
  if (cache_on()) {
    HVD_ASSIGN_OR_RETURN(full, cache_round(want_shutdown, now, &out));
  }
  if (full) HVD_RETURN_IF_ERROR(full_round(want_shutdown, &out));
  return out;
}

// Sorts new requests into cache hits (announced by a bit) and the rest.
void Controller::classify(const std::vector<RequestRef>& incoming, double now) {
  if (!cache_on() && uncached_.empty()) {
    // No cache and nothing carried over: this cycle's full round announces them as the
    // runtime holds them (no TensorRequest per tensor and rank).
    for (const RequestRef& ref : incoming)
      if (ref.op() == OpType::kJoin) joined_here_ = true;
    uncached_refs_.insert(uncached_refs_.end(), incoming.begin(), incoming.end());
    return;
  }
  if (!cache_on()) uncached_.reserve(uncached_.size() + incoming.size());
  for (const RequestRef& ref : incoming) {
    const PendingOp& q = *ref.req;
    if (q.op == OpType::kJoin) joined_here_ = true;
    int bit = -1;
    auto hit = ResponseCache::Lookup::kMiss;
    if (cache_on()) hit = cache_.lookup(*ref.name, q.spec(), q.group_id, q.shape, &bit);
    if (hit == ResponseCache::Lookup::kHit && !cached_pending_.count(bit)) {
      cached_pending_[bit] = CachedPending{ref, now};
      continue;
    }
    if (hit == ResponseCache::Lookup::kStale) stale_bits_.push_back(bit);
    uncached_.push_back(ref.materialize());
  }
}

StatusOr<bool> Controller::cache_round(bool want_shutdown, double now, NegotiationResult* out) {
  const size_t words = cache_.words_in_use();
  std::vector<uint64_t>& and_bits = and_bits_;
  std::vector<uint64_t>& or_bits = or_bits_;
  and_bits.assign(1 + words, 0);
  or_bits.assign(1 + words, 0);
  // The coordinator forces a full round while tensors wait on missing ranks long enough
  // for the stall inspector to act.
  const bool inspect = t_.rank() == 0 && (stall_inspection_due() || announce_.has_value());
  and_bits[0] = (uncached_.empty() && !inspect ? kNothingUncached : 0) |
                (want_shutdown ? 0 : kNoShutdown);
  // A rank that joined in an earlier cycle agrees to every cached allreduce others are
  // ready for (it adds the identity). Any other cached collective cannot complete with a
  // joined rank: it marks those entries invalid, so every rank drops them and a pending
  // one goes to the full round, where it fails as the coordinator fails it (as Horovod).
  if (joined_here_ && joined_before_) {
    std::fill(and_bits.begin() + 1, and_bits.end(), ~uint64_t{0});
    const int bits = std::min(cache_capacity(), static_cast<int>(words * 64));
    for (int bit = 0; bit < bits; ++bit)
      if (cache_.occupied(bit) && !op_row(cache_.at(bit).op).while_joined) {
        and_bits[1 + static_cast<size_t>(bit) / 64] &= ~(uint64_t{1} << (bit % 64));
        set_bit(or_bits, 1, bit);
      }
  }
  for (const auto& [bit, pending] : cached_pending_) {
    set_bit(and_bits, 1, bit);
    if (!cfg_.stall_check_disable && now - pending.since > inspect_after())
      set_bit(or_bits, 1, bit);  // stalled: let the coordinator's inspector see it
  }
  for (int bit : stale_bits_) set_bit(or_bits, 1, bit);
  stale_bits_.clear();
  // The eager small allreduce (the knob is the same on every rank: all pass a payload).
  const bool eager_on = cfg_.eager_allreduce_bytes > 0 && cpu_ != nullptr;
  if (eager_on && eager_payload(&eager_)) and_bits[0] |= kEagerAttached;
  HVD_RETURN_IF_ERROR(cp_.allreduce_bits(&and_bits, &or_bits, eager_on ? &eager_ : nullptr));
  const bool eager = eager_on && (and_bits[0] & kEagerAttached);
  out->shutdown = out->shutdown || !(and_bits[0] & kNoShutdown);
  // Eager: the ready tensors go straight into the result, each with its segment's offset.
  std::vector<Response> ready;
  std::vector<Response>& into = eager ? out->responses : ready;
  if (eager) out->eager_at.assign(out->responses.size(), -1);
  const size_t before = into.size();
  size_t off = 0;
  for_each_set_bit(and_bits, words, [&](int bit) {
    const size_t seg = eager ? eager_.bytes_of(bit) : 0;
    if (bit < cache_capacity() && cache_.occupied(bit)) {
      into.push_back(cache_.use(bit));
      if (eager) out->eager_at.push_back(static_cast<int64_t>(off));
      cached_pending_.erase(bit);
    }
    off += seg;
  });
  const int hits = static_cast<int>(into.size() - before);
  out->cache_hits += hits;
  bool any_invalid = false;
  for_each_set_bit(or_bits, words, [&](int bit) {
    any_invalid = true;
    auto it = cached_pending_.find(bit);
    if (it != cached_pending_.end()) {
      uncached_.push_back(it->second.ref.materialize());
      cached_pending_.erase(it);
    }
    cache_.erase(bit);
  });
  if (eager) {
    // Already reduced on every rank: each tensor completes from its segment, unfused.
    if (off != eager_.data.size()) return Status::Internal("eager allreduce: the reduced segments do not match the bits");
    out->eager = eager_.data.data();
    out->eager_tensors += hits;
  } else {
    auto fused = fuse_responses(std::move(ready), cfg_.fusion_threshold);
    out->responses.insert(out->responses.end(), std::make_move_iterator(fused.begin()),
                          std::make_move_iterator(fused.end()));
  }
  return !(and_bits[0] & kNothingUncached) || any_invalid;
}

// Eligible: every cached request pending here is a CPU allreduce with an element-wise
// reduction, real (not phantom) input, outside any group, and together they hold at most
// eager_allreduce_bytes. A joined rank has nothing to send.
bool Controller::eager_payload(BitsPayload* payload) {
  payload->data.clear();
  if (joined_here_ || cached_pending_.empty()) return false;
  size_t total = 0;
  for (const auto& [bit, c] : cached_pending_) {
    const PendingOp* q = c.ref.req;
    if (!q || q->op != OpType::kAllreduce || q->device != DeviceKind::kCPU ||
        q->reduce_op == ReduceOp::kAdasum || q->group_id >= 0)
      return false;
    const size_t n = q->bytes();
    if (n > 0 && !q->input) return false;  // phantom (a simulation): the negotiated path
    if (n != eager_.bytes_of(bit)) return false;
    total += n;
    if (total > static_cast<size_t>(cfg_.eager_allreduce_bytes)) return false;
  }
  payload->data.resize(total);
  size_t off = 0;
  for (const auto& [bit, c] : cached_pending_) {
    const PendingOp* q = c.ref.req;
    const size_t n = q->bytes();
    if (n == 0) continue;
    uint8_t* dst = payload->data.data() + off;
    cpu_->copy(dst, q->input, n);
    if (q->prescale != 1.0) cpu_->scale(dst, static_cast<int64_t>(n / dtype_size(q->dtype)), q->dtype, q->prescale);
    off += n;
  }
  return true;
}

Status Controller::full_round(bool want_shutdown, NegotiationResult* out) {
  std::vector<uint8_t> mine = encode_requests(want_shutdown, uncached_, uncached_refs_);
  out->cache_misses += static_cast<int>(uncached_.size() + uncached_refs_.size());
  std::vector<TensorRequest>().swap(uncached_);  // the encoded list carries them from here
  std::vector<RequestRef>().swap(uncached_refs_);  // 24 bytes a tensor, on every rank: not kept
  HVD_ASSIGN_OR_RETURN(const Gathered lists, cp_.gather(std::move(mine)));
  std::vector<uint8_t> plan;
  if (t_.rank() == 0) {
    plan = coordinate(lists);
    if (cfg_.autotune) {  // the plan carries the autotuner's setting (only when it is on)
      Writer w;
      w.u8(announce_ ? 1 : 0);
      if (announce_) write_tunables(w, *announce_);
      plan.insert(plan.end(), w.bytes().begin(), w.bytes().end());
      announce_.reset();
    }
  }
  HVD_RETURN_IF_ERROR(cp_.bcast(&plan));
  Reader rd(plan.data(), plan.size());
  const bool shutdown = rd.u8() != 0;
  const int64_t n = rd.i64();
  std::vector<Response> responses;
  for (int64_t i = 0; i < n && !rd.failed(); ++i) responses.push_back(read_response(rd));
  if (cfg_.autotune && !rd.failed() && rd.u8()) out->tunables = read_tunables(rd);
  if (rd.failed()) return Status::Internal("corrupt negotiation plan from the coordinator");
  out->shutdown = out->shutdown || shutdown;
  remember(responses);
  out->responses.insert(out->responses.end(), std::make_move_iterator(responses.begin()),
                        std::make_move_iterator(responses.end()));
  joined_before_ = joined_here_;
  return Status::OK();
}

// The inspector acts at the first warning or, when it is sooner, at the shutdown time: a
// shutdown time below the warning time cancels on time, not at the first warning.
double Controller::inspect_after() const {
  return cfg_.stall_shutdown_time_s > 0 ? std::min(cfg_.stall_check_time_s, cfg_.stall_shutdown_time_s)
                                        : cfg_.stall_check_time_s;
}

bool Controller::stall_inspection_due() const {
  if (cfg_.stall_check_disable || table_.empty()) return false;
  const double now = p_.now();
  for (const auto& [name, p] : table_)
    if (now - p.first_seen >= inspect_after()) return true;
  return false;
}

// Caches negotiated responses (same order on every rank) and tracks join completion.
void Controller::remember(const std::vector<Response>& responses) {
  for (const Response& r : responses) {
    if (r.op == OpType::kJoin && r.error.empty()) joined_here_ = false;
    if (!cache_on() || !ResponseCache::cacheable(r)) continue;
    for (const Response& single : split_response(r)) cache_.put(single);
  }
  // An eviction may have reused a bit this rank was waiting on: renegotiate those.
  for (auto it = cached_pending_.begin(); it != cached_pending_.end();) {
    int bit = -1;
    const PendingOp& q = *it->second.ref.req;
    if (cache_.lookup(*it->second.ref.name, q.spec(), q.group_id, q.shape, &bit) == ResponseCache::Lookup::kHit &&
        bit == it->first) {
      ++it;
    } else {
      uncached_.push_back(it->second.ref.materialize());
      it = cached_pending_.erase(it);
    }
  }
}

void Controller::set_cache_enabled(bool on) {
  if (on == cache_on_) return;
  cache_on_ = on;
  for (auto& [bit, pending] : cached_pending_) uncached_.push_back(pending.ref.materialize());
  cached_pending_.clear();
  stale_bits_.clear();
  cache_ = ResponseCache(cfg_.cache_capacity);
}

}  // namespace hvd
