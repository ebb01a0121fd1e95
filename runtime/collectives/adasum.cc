#include "collectives/adasum.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>

namespace hvd {

namespace {

struct Range {
  int64_t lo, hi;
  int64_t size() const { return hi - lo; }
};

// Squared norms below this leave their coefficient at 1 (Horovod's threshold).
const double kMinNormSq = std::sqrt(DBL_MIN);

// Sums `v` over the 2·level ranks that share rank / (2·level), by recursive doubling. Every
// rank adds the same pairs in the same order, so all get the same bits.
Status sum_over_group(CollectiveContext& c, std::vector<double>& v, int level) {
  std::vector<double> got(v.size());
  const size_t bytes = v.size() * sizeof(double);
  for (int mask = 1; mask <= level; mask <<= 1) {
    const int peer = c.t.rank() ^ mask;
    HVD_RETURN_IF_ERROR(sendrecv(c.t, peer, v.data(), bytes, peer, got.data(), bytes, kTagData, c.deadline));
    for (size_t i = 0; i < v.size(); ++i) v[i] += got[i];
  }
  return Status::OK();
}

// One level's combination of `mine` (this rank's copy of range `cur` in `buf`) with the
// partner's copy in `theirs`, tensor by tensor. `bounds` are the tensors' offsets.
Status combine(CollectiveContext& c, void* buf, const void* theirs, Range cur,
               const std::vector<int64_t>& bounds, DataType dt, bool lower, int level) {
  const size_t es = dtype_size(dt);
  const size_t tensors = bounds.size() - 1;
  auto part = [&](size_t t) {
    return Range{std::max(cur.lo, bounds[t]), std::min(cur.hi, bounds[t + 1])};
  };
  auto at = [&](size_t t, void*& a, const void*& b) {
    const Range r = part(t);
    a = offset(buf, static_cast<size_t>(r.lo) * es);
    b = offset(theirs, static_cast<size_t>(r.lo - cur.lo) * es);
  };
  // {dot, |left|², |right|²} per tensor: the lower rank's subtree is the left one.
  std::vector<double> stats(3 * tensors, 0.0);
  for (size_t t = 0; t < tensors; ++t) {
    void* a;
    const void* b;
    at(t, a, b);
    if (part(t).size() <= 0 || !a) continue;  // nothing here, or phantom
    double s[3];
    HVD_RETURN_IF_ERROR(c.dev.dot_norms(a, b, part(t).size(), dt, s));
    stats[3 * t] = s[0];
    stats[3 * t + 1] = lower ? s[1] : s[2];
    stats[3 * t + 2] = lower ? s[2] : s[1];
  }
  HVD_RETURN_IF_ERROR(sum_over_group(c, stats, level));
  for (size_t t = 0; t < tensors; ++t) {
    void* a;
    const void* b;
    at(t, a, b);
    if (part(t).size() <= 0 || !a) continue;
    const double dot = stats[3 * t];
    const double mine = lower ? stats[3 * t + 1] : stats[3 * t + 2];
    const double other = lower ? stats[3 * t + 2] : stats[3 * t + 1];
    const double ca = mine >= kMinNormSq ? 1.0 - dot / mine * 0.5 : 1.0;
    const double cb = other >= kMinNormSq ? 1.0 - dot / other * 0.5 : 1.0;
    HVD_RETURN_IF_ERROR(c.dev.scaled_add(a, ca, b, cb, part(t).size(), dt));
  }
  return Status::OK();
}

}  // namespace

Status adasum_allreduce(CollectiveContext& c, void* buf, const std::vector<int64_t>& counts,
                        DataType dt) {
  const int p = c.t.size();
  const int r = c.t.rank();
  if (!is_power_of_two(p))
    return Status::InvalidArgument("Adasum needs a power-of-two number of ranks (1, 2, 4, 8, ...); this group has " +
                                   std::to_string(p));
  std::vector<int64_t> bounds{0};
  for (int64_t n : counts) bounds.push_back(bounds.back() + n);
  const int64_t total = bounds.back();
  if (p == 1 || total == 0) return Status::OK();
  const size_t es = dtype_size(dt);
  const int64_t half = total - total / 2;  // the most any rank receives at one level
  if (c.scratch.size() < static_cast<size_t>(half) * es) c.scratch.reserve(static_cast<size_t>(half) * es);
  void* theirs = c.scratch.data();
  // Vector halving, distance doubling.
  std::vector<Range> history;
  Range cur{0, total};
  for (int level = 1; level < p; level <<= 1) {
    const int partner = r ^ level;
    const bool lower = (r & level) == 0;
    const int64_t mid = cur.lo + cur.size() / 2;
    const Range keep = lower ? Range{cur.lo, mid} : Range{mid, cur.hi};
    const Range give = lower ? Range{mid, cur.hi} : Range{cur.lo, mid};
    HVD_RETURN_IF_ERROR(sendrecv(c.t, partner, offset(buf, static_cast<size_t>(give.lo) * es),
                                 static_cast<size_t>(give.size()) * es, partner, theirs,
                                 static_cast<size_t>(keep.size()) * es, kTagData, c.deadline));
    history.push_back(cur);
    cur = keep;
    HVD_RETURN_IF_ERROR(combine(c, buf, theirs, cur, bounds, dt, lower, level));
  }
  // Distance halving: swap the combined ranges back down the same tree.
  for (int level = p / 2; level >= 1; level >>= 1) {
    const int partner = r ^ level;
    const Range parent = history.back();
    history.pop_back();
    const Range other = cur.lo == parent.lo ? Range{cur.hi, parent.hi} : Range{parent.lo, cur.lo};
    HVD_RETURN_IF_ERROR(sendrecv(c.t, partner, offset(buf, static_cast<size_t>(cur.lo) * es),
                                 static_cast<size_t>(cur.size()) * es, partner,
                                 offset(buf, static_cast<size_t>(other.lo) * es),
                                 static_cast<size_t>(other.size()) * es, kTagData, c.deadline));
    cur = parent;
  }
  return Status::OK();
}

}  // namespace hvd
