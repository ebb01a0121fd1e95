// hvd::Runtime: one rank's Horovod-style runtime, built from (Platform, Transport, Device,
// Config). No process-global state: a simulation builds hundreds of these in one process.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "hvd/config.h"
#include "hvd/device.h"
#include "hvd/platform.h"
#include "hvd/seams.h"
#include "hvd/status.h"
#include "hvd/transport.h"
#include "hvd/types.h"

namespace hvd {

class TimelineWriter;
class RuntimeImpl;

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
  double ready_at = -1;                  ///< platform time the tensor became ready, when that
                                         ///< was before this call (a cycle hook's submission,
                                         ///< see Runtime::set_cycle_hook); -1: now
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

/// Counters a runtime keeps (for benchmarks and autotune).
struct RuntimeStats {
  int64_t cycles = 0;              ///< background loop iterations
  int64_t caller_cycles = 0;       ///< of those, run by a caller blocked in wait() (caller_drives)
  int64_t cache_hits = 0;          ///< tensors negotiated through the response cache
  int64_t cache_misses = 0;        ///< tensors negotiated through the coordinator
  int64_t responses = 0;           ///< responses executed (after fusion)
  int64_t tensors = 0;             ///< tensors completed
  int64_t bytes_allreduced = 0;    ///< payload bytes of completed allreduces
  double negotiation_s = 0;        ///< time spent in negotiation
  double execution_s = 0;          ///< time spent executing collectives
};

/// What the autotuner (HOROVOD_AUTOTUNE) has set: the values every rank runs with now.
/// Changes take effect on all ranks at the end of the same background cycle.
struct AutotuneState {
  bool enabled = false;                 ///< the autotune knob is on
  bool done = false;                    ///< the final setting is in effect
  int64_t done_cycle = -1;              ///< cycle at whose end the final setting took effect
  int64_t changes = 0;                  ///< settings applied so far
  int samples = 0;                      ///< samples scored (rank 0; 0 elsewhere)
  double best_score = 0;                ///< best bytes allreduced per second (rank 0)
  int64_t fusion_threshold = 0;         ///< bytes
  double cycle_time_ms = 0;             ///< background loop period
  bool cache_enabled = false;           ///< response cache in use
  bool hierarchical_allreduce = false;  ///< hierarchical allreduce in use
  bool hierarchical_allgather = false;  ///< hierarchical allgather in use
};

/// Everything a Runtime is built from: the rank's seams (borrowed, they must outlive it)
/// and how it runs. Every world builds it alike: RuntimeOptions{seams, config, ...}.
struct RuntimeOptions : Seams {
  Config config;                          ///< knobs
  TimelineWriter* timeline = nullptr;     ///< shared writer; null: open config.timeline
  std::ostream* log = nullptr;            ///< log stream (default std::cerr)
  double time_origin = 0;                 ///< platform time of timeline ts = 0
};

/// One rank's runtime.
class Runtime {
 public:
  /// Builds a stopped runtime.
  explicit Runtime(RuntimeOptions opts);
  /// Stops the runtime if it is running.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// Validates the config and starts the background loop.
  Status start();
  /// Negotiates shutdown with every rank, fails pending operations, joins the loop.
  Status shutdown();
  /// True between start() and shutdown().
  bool running() const;

  /// Rank in the world.
  int rank() const;
  /// World size.
  int size() const;
  /// Rank among the ranks on this node.
  int local_rank() const;
  /// Ranks on this node.
  int local_size() const;
  /// Index of this node.
  int cross_rank() const;
  /// Number of nodes.
  int cross_size() const;

  /// The funnel: validates, logs and queues one request.
  Handle enqueue(OpRequest req);

  /// Asynchronous allreduce of `in` into `out` (same shape; may alias).
  Handle allreduce_async(const std::string& name, const Tensor& in, const Tensor& out,
                         ReduceOp op = ReduceOp::kAverage, double prescale = 1.0,
                         double postscale = 1.0, int process_set = 0);
  /// Blocking allreduce.
  Status allreduce(const std::string& name, const Tensor& in, const Tensor& out,
                   ReduceOp op = ReduceOp::kAverage, double prescale = 1.0,
                   double postscale = 1.0, int process_set = 0);
  /// Allreduces several tensors as one negotiated, fused unit.
  std::vector<Handle> grouped_allreduce_async(const std::vector<std::string>& names,
                                              const std::vector<Tensor>& ins,
                                              const std::vector<Tensor>& outs,
                                              ReduceOp op = ReduceOp::kAverage,
                                              int process_set = 0);
  /// Blocking grouped allreduce.
  Status grouped_allreduce(const std::vector<std::string>& names, const std::vector<Tensor>& ins,
                           const std::vector<Tensor>& outs, ReduceOp op = ReduceOp::kAverage,
                           int process_set = 0);
  /// Asynchronous allgather along the first dimension (which may differ per rank).
  Handle allgather_async(const std::string& name, const Tensor& in, int process_set = 0);
  /// Allgathers several tensors as one negotiated unit (each result in its handle).
  std::vector<Handle> grouped_allgather_async(const std::vector<std::string>& names,
                                              const std::vector<Tensor>& ins,
                                              int process_set = 0);
  /// Blocking grouped allgather: the finished handles (results) go to *out.
  Status grouped_allgather(const std::vector<std::string>& names, const std::vector<Tensor>& ins,
                           std::vector<Handle>* out, int process_set = 0);
  /// Asynchronous broadcast of `buf` from `root` (in place).
  Handle broadcast_async(const std::string& name, const Tensor& buf, int root,
                         int process_set = 0);
  /// Blocking broadcast.
  Status broadcast(const std::string& name, const Tensor& buf, int root, int process_set = 0);
  /// Asynchronous alltoall: splits[r] first-dim rows go to rank r (empty: even split).
  Handle alltoall_async(const std::string& name, const Tensor& in,
                        const std::vector<int64_t>& splits, int process_set = 0);
  /// Asynchronous reducescatter along the first dimension.
  Handle reducescatter_async(const std::string& name, const Tensor& in,
                             ReduceOp op = ReduceOp::kAverage, int process_set = 0);
  /// Reducescatters several tensors as one negotiated unit (each result in its handle).
  std::vector<Handle> grouped_reducescatter_async(const std::vector<std::string>& names,
                                                  const std::vector<Tensor>& ins,
                                                  ReduceOp op = ReduceOp::kAverage,
                                                  int process_set = 0);
  /// Blocking grouped reducescatter: the finished handles (results) go to *out.
  Status grouped_reducescatter(const std::vector<std::string>& names,
                               const std::vector<Tensor>& ins, std::vector<Handle>* out,
                               ReduceOp op = ReduceOp::kAverage, int process_set = 0);
  /// Blocks until every rank of the set has called it.
  Status barrier(int process_set = 0);
  /// Declares this rank out of data; returns when all ranks joined (last joiner in *last).
  Status join(int* last_joined_rank = nullptr);
  /// Collective: creates a process set of `ranks` (every rank calls it, in the same order).
  Status add_process_set(const std::vector<int>& ranks, int* id);
  /// Collective over the world: removes process set `id` (not 0). Its id is not reused;
  /// operations still pending in it fail, later ones are refused.
  Status remove_process_set(int id);

  /// The knobs the runtime was started with (autotuned values: autotune_state()).
  const Config& config() const;
  /// True when cycles start on a fixed pace (cycle_time > 0, no autotune): the loop takes
  /// the submitted requests only at the start of each cycle, never woken by a submission.
  bool paced_cycles() const;
  /// Paced cycles: `hook` runs on the background loop at the start of every cycle, just
  /// before the loop takes each process set's submitted requests, with the shared platform
  /// time (Platform::shared_now). A harness that knows when its tensors become ready (a
  /// replayed training step) submits there the ones ready by then, with OpRequest::ready_at,
  /// instead of waking at every ready time: the loop sees exactly what it would have seen.
  /// Null clears it. The hook may call enqueue() and must not block. Calls of the hook and
  /// set_cycle_hook() exclude each other: once set_cycle_hook() returns, no call of the
  /// previous hook is running or will start (a real loop thread runs the hook concurrently
  /// with the thread that set it).
  void set_cycle_hook(std::function<void(double)> hook);
  /// The autotuner's current setting (consistent snapshot; safe from any thread).
  AutotuneState autotune_state() const;
  /// Counters so far.
  RuntimeStats stats() const;

 private:
  std::unique_ptr<RuntimeImpl> impl_;
};

/// Builds and starts one rank's runtime, for a world that keeps it (the facade, hvdbench).
/// On failure *out is left empty.
Status start_runtime(const RuntimeOptions& opts, std::unique_ptr<Runtime>* out);

/// One rank's whole life in a world that runs a body on every rank (run_local,
/// hvd::sim::simulate): builds the runtime, starts it, runs body(rt), shuts it down.
/// Returns the failed start or shutdown, else OK.
Status run_rank(const RuntimeOptions& opts, const std::function<void(Runtime&)>& body);

}  // namespace hvd
