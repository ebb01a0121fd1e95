// ResponseCache: Horovod's negotiation fast path. Every rank keeps an identical cache of
// per-tensor responses (same insertions, same evictions, in the same order); a tensor seen
// before with the same parameters is then announced by setting one bit, and an AND of the
// bit vectors tells every rank which tensors are ready everywhere, with no coordinator.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/message.h"

namespace hvd {

/// LRU cache of single-tensor responses keyed by tensor name, each owning a bit position.
class ResponseCache {
 public:
  /// Result of looking up a local request.
  enum class Lookup { kMiss, kHit, kStale };

  /// A cache of `capacity` entries (0: disabled).
  explicit ResponseCache(int64_t capacity);
  /// True when enabled.
  bool enabled() const { return capacity_ > 0; }
  /// Number of 64-bit words a bit vector needs.
  size_t words() const { return static_cast<size_t>((capacity_ + 63) / 64); }
  /// Whether `req` matches a cached response; sets *bit for kHit and kStale.
  Lookup lookup(const TensorRequest& req, int* bit) const;
  /// Whether responses of this kind may be cached.
  static bool cacheable(const Response& r);
  /// Inserts (or refreshes) one single-tensor response; evicts the least recently used.
  void put(const Response& single);
  /// The cached response at `bit` (marks it recently used).
  const Response& use(int bit);
  /// Drops the entry at `bit`.
  void erase(int bit);
  /// True when `bit` holds an entry.
  bool occupied(int bit) const { return slots_[static_cast<size_t>(bit)] != nullptr; }
  /// Number of entries.
  size_t size() const { return by_name_.size(); }

 private:
  struct Entry {
    Response response;
    std::list<int>::iterator lru;
  };
  int64_t capacity_;
  // A pointer per bit, not an entry: empty slots cost 8 bytes instead of a Response each
  // (230 KiB per rank with the default 1,024 bits, 3.7 GB at 16,384 ranks).
  std::vector<std::unique_ptr<Entry>> slots_;
  std::unordered_map<std::string, int> by_name_;
  std::list<int> lru_;  // front = most recent
  std::vector<int> free_;
};

/// Splits a (possibly fused) response into per-tensor responses.
std::vector<Response> split_response(const Response& r);

}  // namespace hvd
