// hvd::Runtime: one rank's Horovod-style runtime, built from (Platform, Transport, Device,
// Config). No process-global state: a simulation builds hundreds of these in one process.
// The facade: the request types are in hvd/request.h, the options and reports in
// hvd/runtime_options.h; the core includes those, never this.
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
#include "hvd/request.h"
#include "hvd/runtime_options.h"
#include "hvd/seams.h"
#include "hvd/status.h"
#include "hvd/transport.h"
#include "hvd/types.h"

namespace hvd {

class RuntimeImpl;

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

  /// The funnel: validates, logs and queues one request. A request with on_done set has it
  /// called once when it ends (see DoneCallback), even when it is refused here.
  Handle enqueue(OpRequest req);
  /// Queues `reqs` as one group (what the grouped_* calls do): one negotiated unit, and for
  /// allreduce as few fused responses as the members allow. Each request keeps its own
  /// on_done. Returns a handle per request, in order.
  std::vector<Handle> enqueue_group(std::vector<OpRequest> reqs);

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
  /// Starts writing a timeline to `path` (this rank's file: timeline_rank_path(path, rank)),
  /// replacing the one running (HVD_TIMELINE's or an earlier start's, which is closed).
  /// Every operation submitted after this returns is recorded; `mark_cycles` adds the
  /// CYCLE_START marks. Not collective: each rank starts its own file. Refused (Precondition)
  /// when the world shares one writer among its ranks (RuntimeOptions::timeline).
  Status start_timeline(const std::string& path, bool mark_cycles = false);
  /// Stops the running timeline (none running: OK). What operations that finished before
  /// the call recorded is in the file when it returns; the file stays valid JSON.
  Status stop_timeline();

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
