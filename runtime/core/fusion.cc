#include "core/fusion.h"

#include "core/op_table.h"

namespace hvd {

bool fusable(const Response& a, const Response& b) {
  // Allreduce has no root: every other field of the spec must agree.
  return a.op == b.op && op_row(a.op).fuses && a.error.empty() &&
         b.error.empty() && (spec_diff(a, b) & ~unsigned{kSpecRoot}) == 0 && a.joined == b.joined;
}

std::vector<Response> fuse_responses(std::vector<Response> in, int64_t threshold) {
  if (threshold <= 0 || in.size() < 2) return in;
  std::vector<Response> out;
  std::vector<bool> used(in.size(), false);
  for (size_t i = 0; i < in.size(); ++i) {
    if (used[i]) continue;
    Response acc = std::move(in[i]);
    used[i] = true;
    if (op_row(acc.op).fuses && acc.error.empty()) {
      int64_t bytes = acc.bytes();
      for (size_t j = i + 1; j < in.size() && bytes < threshold; ++j) {
        if (used[j] || !fusable(acc, in[j])) continue;  // look past non-matching responses
        const int64_t b = in[j].bytes();
        if (bytes + b > threshold) continue;
        acc.names.insert(acc.names.end(), in[j].names.begin(), in[j].names.end());
        acc.counts.insert(acc.counts.end(), in[j].counts.begin(), in[j].counts.end());
        bytes += b;
        used[j] = true;
      }
    }
    out.push_back(std::move(acc));
  }
  return out;
}

}  // namespace hvd
