// Pairwise alltoall with uneven blocks: at step s every rank sends to r+s and receives
// from r-s, so each step is a perfect matching and no link carries two messages.
#pragma once

#include "collectives/collective.h"

namespace hvd {

/// Exchanges every rank's row counts; returns recv_counts, where recv_counts[r] is what
/// rank r will send us.
StatusOr<std::vector<int64_t>> exchange_counts(CollectiveContext& c,
                                               const std::vector<int64_t>& send_counts);

/// Block r of `in` (send_bytes[r] bytes, in rank order) goes to rank r; block r of `out`
/// (recv_bytes[r] bytes) comes from rank r.
Status pairwise_alltoallv(CollectiveContext& c, const void* in,
                          const std::vector<size_t>& send_bytes, void* out,
                          const std::vector<size_t>& recv_bytes);

}  // namespace hvd
