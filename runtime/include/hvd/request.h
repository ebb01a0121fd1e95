// The request types: a tensor, one collective request as the caller states it, and the
// handle it gets back. What the facade (hvd/runtime.h) takes and gives, and what the core
// passes around; nothing here depends on a runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hvd/status.h"
#include "hvd/types.h"

namespace hvd {

/// A non-owning view of a tensor: storage (may be null when phantom), type, shape, device.
struct Tensor {
  void* data = nullptr;                  ///< first element (null: phantom or empty)
  DataType dtype = DataType::kFloat32;   ///< element type
  std::vector<int64_t> shape;            ///< dimensions; {} is a scalar
  DeviceKind device = DeviceKind::kCPU;  ///< where `data` lives

  /// Number of elements.
  int64_t count() const { return num_elements(shape); }
  /// Size in bytes.
  size_t bytes() const { return static_cast<size_t>(count()) * dtype_size(dtype); }
};

class OpHandle;

/// Completion callback of one request (OpRequest::on_done): the operation's status and its
/// handle, whose results (output(), output_shape(), received_splits(), last_joined_rank())
/// are readable during the call. The runtime calls it exactly once: on the thread that
/// finished the operation (the background loop, or a caller running a cycle) once its
/// results are in place and its waiters woken; for a request refused up front (bad
/// arguments, runtime not running or stopped), on the enqueuing thread before enqueue()
/// returns. Operations failed by the runtime (a lost peer, shutdown, a removed process set)
/// call it too. It must not block, and must not wait() on a handle of the same runtime.
using DoneCallback = std::function<void(const Status&, const OpHandle&)>;

/// One collective request as the caller states it (the input of the enqueue funnel).
struct OpRequest {
  OpType op = OpType::kAllreduce;        ///< which collective
  std::string name;                      ///< tensor name, unique among pending ops
  Tensor input;                          ///< data this rank contributes
  Tensor output;                         ///< result storage for allreduce/broadcast (may alias input)
  ReduceOp reduce_op = ReduceOp::kAverage;  ///< allreduce/reducescatter reduction
  double prescale = 1.0;                 ///< multiply inputs by this before reducing
  double postscale = 1.0;                ///< multiply results by this after reducing
  int root = 0;                          ///< broadcast root (rank in the process set);
                                         ///< remove_process_set: the set to remove
  std::vector<int64_t> splits;           ///< alltoall: first-dim rows sent to each peer
  int process_set = 0;                   ///< 0 = all ranks
  int group_id = -1;                     ///< grouped ops: set by the runtime
  int group_size = 0;                    ///< grouped ops: members of the group
  std::vector<int> set_ranks;            ///< add_process_set: the members (world ranks)
  bool caller_waits = false;             ///< the caller wait()s at once (blocking call): the
                                         ///< runtime need not wake its loop for this request
  bool average = false;                  ///< set by the runtime: reduce_op was kAverage and is
                                         ///< now kSum, postscale divided by the set's size
  double ready_at = -1;                  ///< platform time the tensor became ready, when that
                                         ///< was before this call (a cycle hook's submission,
                                         ///< see Runtime::set_cycle_hook); -1: now
  DoneCallback on_done;                  ///< optional: called once when the operation ends
};

/// The state of one submitted operation; wait() or poll() for its outcome.
class OpHandle {
 public:
  virtual ~OpHandle() = default;
  /// Blocks until the operation finished; returns its status.
  virtual Status wait() = 0;
  /// True once finished (does not block).
  virtual bool poll() = 0;
  /// Runtime-allocated output (allgather, alltoall, reducescatter); null for others.
  virtual const void* output() const = 0;
  /// Size of output() in bytes.
  virtual size_t output_bytes() const = 0;
  /// Shape of the runtime-allocated output.
  virtual std::vector<int64_t> output_shape() const = 0;
  /// alltoall: rows received from each peer.
  virtual std::vector<int64_t> received_splits() const = 0;
  /// join: the last rank that joined.
  virtual int last_joined_rank() const = 0;
  /// Background-loop cycle (counted from 1, the same on every rank) that completed the
  /// operation; -1 if it was not completed by a cycle (rejected up front, runtime failed).
  virtual int64_t cycle() const { return -1; }
};
using Handle = std::shared_ptr<OpHandle>;

}  // namespace hvd
