// The table of operations: one row per OpType holds what the runtime needs to know of that
// collective (its name, what it reduces, whether its responses are cached or fused, its
// validation, what the ranks must agree on, the shape of its result and the body that
// executes it). Enqueue, the coordinator, the response cache, fusion and the executor read
// the row instead of switching on the op; adding a collective is one row, one algorithm
// file and the facade.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/message.h"
#include "hvd/request.h"
#include "hvd/status.h"

namespace hvd {

class Executor;
class ProcessSets;

/// What must agree across the ranks' shapes.
enum class ShapeRule : uint8_t {
  kNone,  ///< no tensor travels (barrier, join, process sets)
  kSame,  ///< the whole shape (allreduce, broadcast, reducescatter)
  kTail,  ///< all but the first dimension (allgather, alltoall)
};

/// What an op's validation may ask of the runtime.
struct OpCheckEnv {
  int set_size;              ///< ranks in the request's process set (> 0)
  int world_size;            ///< ranks in the world
  bool allows_phantom;       ///< the device takes tensors without storage (a simulation)
  const ProcessSets& sets;   ///< remove_process_set checks the set it names
};

/// A rank's request in the coordinator's table, by rank (null: not submitted).
using RequestOf = std::function<const TensorRequest*(int rank)>;

struct OpRow {
  OpType op;
  std::string_view name;     ///< upper case, as the timeline and errors spell it
  bool moves_data;           ///< the ranks exchange an input tensor
  bool reduces;              ///< reduce_op, Average and the scale factors apply
  bool cacheable;            ///< a response may be cached and agreed on the bit exchange
  bool fuses;                ///< responses (and a group's members) share one buffer
  bool while_joined;         ///< completes while ranks have joined (they add the identity)
  ShapeRule shapes;          ///< what the ranks' shapes must agree on
  /// The op's own checks of one call, after the common ones (name, shape, storage, set).
  Status (*validate)(const OpRequest& q, const OpCheckEnv& env);
  /// Disagreement in the op's own fields (its root, its ranks) between two ranks' requests,
  /// in the coordinator's words; "" when they agree.
  std::string (*mismatch)(const TensorRequest& a, const TensorRequest& b, unsigned diff);
  /// Whether a cached response still answers a request of `shape` whose spec differs from
  /// it in `diff` (op, dtype and device are already equal; the request is not grouped).
  bool (*cache_matches)(const Response& cached, unsigned diff, const std::vector<int64_t>& shape);
  /// Fills the response's result shape (counts, first dims, rows) from the agreed request.
  void (*result_shape)(Response* r, const TensorRequest& a, int set_size, const RequestOf& of);
  /// Runs one response on one rank.
  Status (Executor::*execute)();
};

/// The row of `op`.
const OpRow& op_row(OpType op);

}  // namespace hvd
