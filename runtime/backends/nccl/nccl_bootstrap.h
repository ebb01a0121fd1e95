// Bootstrap of an NCCL communicator over a host Transport: every member reports whether it
// is ready (GPU selected, stream made), the root makes the unique id, and the verdict plus
// the id travel back down. Frames go up and down a binomial tree (nccl_plan.h), so a
// failure anywhere reaches every member as the same clear Status instead of a hang in
// ncclCommInitRank. No CUDA here: tests run it over the in-process transport.
#pragma once

#include <array>
#include <cstdint>
#include <functional>

#include "backends/nccl/nccl_plan.h"
#include "hvd/transport.h"

namespace hvd::nccl {

/// The raw bytes of an ncclUniqueId.
using UniqueIdBytes = std::array<uint8_t, kUniqueIdBytes>;

/// Collective over `group`: gathers every member's `local` status to rank 0; if all are
/// OK, rank 0 calls `make_id` (may fail); the outcome reaches every member. Returns OK with
/// *id filled, or on every member the first failure, prefixed "rank R: ". `generation`
/// must be equal on all members (it is checked). Use make_id = null for a pure agreement.
Status share_unique_id(Transport& group, uint64_t generation, const Status& local,
                       const std::function<Status(UniqueIdBytes*)>& make_id, UniqueIdBytes* id);

/// share_unique_id without an id: OK on every member iff `local` is OK on every member.
Status agree(Transport& group, uint64_t generation, const Status& local);

}  // namespace hvd::nccl
