// What every collective algorithm gets: the group's Transport, the Device that owns the
// memory, scratch space, the segment size and the deadline for each wait.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hvd/device.h"
#include "hvd/status.h"
#include "hvd/transport.h"
#include "hvd/types.h"
#include "collectives/pieces.h"

namespace hvd {

/// Inputs shared by all algorithms of one execution.
struct CollectiveContext {
  Transport& t;                   ///< the group the collective runs over
  Device& dev;                    ///< owns the buffers; does copies and reductions
  DeviceBuffer& scratch;          ///< receive staging, grown on demand
  int64_t segment_bytes;          ///< pipelining granularity of large transfers
  double deadline = kNoDeadline;  ///< absolute platform time after which waits fail
};

/// Offsets of `parts` near-equal pieces of `count` elements (size parts+1).
std::vector<int64_t> even_split(int64_t count, int parts);

/// The offsets even_split() lists, each computed when asked: O(1) memory where a table of
/// parts+1 offsets on every rank of a p-rank ring is O(p^2) in all.
struct EvenSplit {
  EvenSplit(int64_t count, int parts) : base(count / parts), extra(count % parts) {}
  int64_t operator[](size_t k) const {
    const int64_t i = static_cast<int64_t>(k);
    return i * base + (i < extra ? i : extra);
  }
  int64_t base, extra;
};

/// Adds `bytes` to a typed pointer (null stays null: phantom buffers).
inline void* offset(void* p, size_t bytes) {
  return p ? static_cast<char*>(p) + bytes : nullptr;
}
/// Const variant of offset().
inline const void* offset(const void* p, size_t bytes) {
  return p ? static_cast<const char*>(p) + bytes : nullptr;
}

/// Sends `sbytes` to `to` while receiving `rcount` elements from `from` and reducing
/// them into `dst` segment by segment (receive of segment k+1 overlaps reduction of k).
Status send_recv_reduce(CollectiveContext& c, int to, const void* src, size_t sbytes, int from,
                        void* dst, int64_t rcount, DataType dt, ReduceOp op);

/// The same over logical buffers: sends elements [sa, sb) of `src` and reduces what arrives
/// into elements [da, db) of `dst` (pieces need not be contiguous). With `own`, the result
/// is own (op) received instead of dst (op) received (own and dst share the layout).
Status send_recv_reduce(CollectiveContext& c, int to, const PieceBuffer& src, int64_t sa,
                        int64_t sb, int from, const PieceBuffer& dst, int64_t da, int64_t db,
                        DataType dt, ReduceOp op, const PieceBuffer* own = nullptr);

/// Copies logical buffer `in` into `out` (same layout), piece by piece.
void copy_pieces(CollectiveContext& c, const PieceBuffer& in, const PieceBuffer& out);

/// Waits for every request in `reqs`, a container of unique_ptr<Request>, and empties it
/// (first error wins).
template <class Requests>
Status wait_all(Requests& reqs, double deadline) {
  Status first;
  for (auto& r : reqs) {
    Status s = r->wait(deadline);
    if (!s.ok() && first.ok()) first = s;
  }
  reqs.clear();
  return first;
}

}  // namespace hvd
