// Tensor fusion: many small allreduces become one. Responses are scanned in order; each
// allreduce absorbs later compatible ones (same dtype, op, scale factors, device) while the
// total stays within the fusion threshold, looking ahead past responses that do not match
// (they keep their relative order). Every rank runs the same function on the same list.
#pragma once

#include <cstdint>
#include <vector>

#include "core/message.h"

namespace hvd {

/// True when `b` may be fused into `a`.
bool fusable(const Response& a, const Response& b);

/// Fuses `in` under `threshold_bytes` (0 disables fusion).
std::vector<Response> fuse_responses(std::vector<Response> in, int64_t threshold_bytes);

}  // namespace hvd
