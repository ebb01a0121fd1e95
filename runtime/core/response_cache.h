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
  /// Words that cover every bit ever given out (the same on every rank: same insertions);
  /// a bit vector of this length says everything, and a small cache's rounds carry 8 bytes
  /// where words() would carry 128.
  size_t words_in_use() const { return static_cast<size_t>((high_water_ + 63) / 64); }
  /// Whether `req` matches a cached response; sets *bit for kHit and kStale.
  Lookup lookup(const TensorRequest& req, int* bit) const;
  /// The same for a request given by its parts (no TensorRequest built).
  Lookup lookup(const std::string& name, const OpSpec& spec, int32_t group_id,
                const std::vector<int64_t>& shape, int* bit) const;
  /// Whether responses of this kind may be cached.
  static bool cacheable(const Response& r);
  /// Inserts (or refreshes) one single-tensor response; evicts the least recently used.
  void put(const Response& single);
  /// The cached response at `bit` (marks it recently used).
  const Response& use(int bit);
  /// The cached response at `bit`, without marking it used (the bit must be occupied).
  const Response& at(int bit) const { return slots_[static_cast<size_t>(bit)]->response; }
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
  int64_t high_water_ = 0;  // 1 + the highest bit ever given out
};

/// Splits a (possibly fused) response into per-tensor responses.
std::vector<Response> split_response(const Response& r);

}  // namespace hvd
