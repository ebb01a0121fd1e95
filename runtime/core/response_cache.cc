#include "core/response_cache.h"

#include <algorithm>

#include "core/op_table.h"

namespace hvd {

ResponseCache::ResponseCache(int64_t capacity) : capacity_(capacity) {
  slots_.resize(static_cast<size_t>(capacity));
  for (int64_t i = capacity - 1; i >= 0; --i) free_.push_back(static_cast<int>(i));
}

bool ResponseCache::cacheable(const Response& r) {
  return r.error.empty() && r.joined.empty() && op_row(r.op).cacheable;
}

namespace {

// The parts of a request a cached response must agree with (its spec, group and shape).
bool matches(const Response& c, const OpSpec& q, int32_t group_id, const std::vector<int64_t>& shape) {
  const unsigned diff = spec_diff(c, q);
  if ((diff & (kSpecOp | kSpecDtype | kSpecDevice)) || group_id >= 0) return false;
  const OpRow& row = op_row(q.op);
  return row.cacheable && row.cache_matches(c, diff, shape);
}

}  // namespace

ResponseCache::Lookup ResponseCache::lookup(const TensorRequest& req, int* bit) const {
  return lookup(req.name, req, req.group_id, req.shape, bit);
}

ResponseCache::Lookup ResponseCache::lookup(const std::string& name, const OpSpec& spec, int32_t group_id,
                                            const std::vector<int64_t>& shape, int* bit) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return Lookup::kMiss;
  *bit = it->second;
  return matches(slots_[static_cast<size_t>(it->second)]->response, spec, group_id, shape) ? Lookup::kHit
                                                                                         : Lookup::kStale;
}

void ResponseCache::put(const Response& single) {
  if (!enabled()) return;
  auto it = by_name_.find(single.names[0]);
  if (it != by_name_.end()) {
    Entry& e = *slots_[static_cast<size_t>(it->second)];
    e.response = single;
    lru_.splice(lru_.begin(), lru_, e.lru);
    return;
  }
  if (free_.empty()) erase(lru_.back());
  int bit = free_.back();
  free_.pop_back();
  high_water_ = std::max<int64_t>(high_water_, bit + 1);
  lru_.push_front(bit);
  slots_[static_cast<size_t>(bit)] = std::make_unique<Entry>(Entry{single, lru_.begin()});
  by_name_[single.names[0]] = bit;
}

const Response& ResponseCache::use(int bit) {
  Entry& e = *slots_[static_cast<size_t>(bit)];
  lru_.splice(lru_.begin(), lru_, e.lru);
  return e.response;
}

void ResponseCache::erase(int bit) {
  auto& slot = slots_[static_cast<size_t>(bit)];
  if (!slot) return;
  by_name_.erase(slot->response.names[0]);
  lru_.erase(slot->lru);
  slot.reset();
  free_.push_back(bit);
}

std::vector<Response> split_response(const Response& r) {
  // Every field but the per-tensor vectors, once; then one element of each per tensor. (A copy
  // of the fused response per tensor, its vectors then assigned one element, kept their
  // capacity: k elements for each of k tensors, 1.5 GB for a cycle of 10,000.)
  Response base = r;
  std::vector<std::string>().swap(base.names);
  std::vector<int64_t>().swap(base.counts);
  std::vector<int64_t>().swap(base.first_dims);
  std::vector<int64_t>().swap(base.row_elems);
  std::vector<Response> out;
  out.reserve(r.names.size());
  for (size_t i = 0; i < r.names.size(); ++i) {
    Response s = base;
    s.names.push_back(r.names[i]);
    if (i < r.counts.size()) s.counts.push_back(r.counts[i]);
    if (i < r.first_dims.size()) s.first_dims.push_back(r.first_dims[i]);
    if (i < r.row_elems.size()) s.row_elems.push_back(r.row_elems[i]);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace hvd
