// The Horovod-like C++ API: a thin facade over one default Runtime per process.
// Under mpirun it runs on Open MPI; built without MPI it is a single-rank world.
#pragma once

#include <string>
#include <vector>

#include "hvd/runtime.h"

namespace hvd {

/// Starts the default runtime (MPI world when built with MPI). Knobs from HVD_*/HOROVOD_*.
Status init();
/// Stops the default runtime (and finalizes MPI if init() initialized it).
Status shutdown();
/// True between init() and shutdown().
bool is_initialized();
/// World rank (-1 before init).
int rank();
/// World size (-1 before init).
int size();
/// Rank on this node.
int local_rank();
/// Ranks on this node.
int local_size();
/// Index of this node.
int cross_rank();
/// Number of nodes.
int cross_size();
/// The default runtime (null before init), for the full API.
Runtime* runtime();

/// Elastic training (hvdrun --tcp --host-discovery-script ...; docs/python.md "Elastic").
/// True when this process is an elastic worker (hvdrun set HVD_ELASTIC_WORKER).
bool elastic_enabled();
/// The generation (world) this process is in: 0 before init or outside elastic mode.
int64_t elastic_generation();
/// The latest generation the driver published: newer than elastic_generation() means the
/// set of workers changed and the world will be rebuilt at the next reset point.
Status elastic_latest_generation(int64_t* gen);
/// The reset point: shuts the runtime and its transport down (a failure of that shutdown,
/// say a dead peer, is ignored) and joins the next generation that includes this worker:
/// new size, new rank. Waits for one up to the elastic timeout (HVD_START_TIMEOUT). Every
/// member of the new generation must call it (or, for new workers, init()).
Status elastic_reset();

/// Blocking allreduce of `in` into `out`.
Status allreduce(const std::string& name, const Tensor& in, const Tensor& out,
                 ReduceOp op = ReduceOp::kAverage, double prescale = 1.0, double postscale = 1.0);
/// Asynchronous allreduce.
Handle allreduce_async(const std::string& name, const Tensor& in, const Tensor& out,
                       ReduceOp op = ReduceOp::kAverage, double prescale = 1.0,
                       double postscale = 1.0);
/// Blocking grouped allreduce.
Status grouped_allreduce(const std::vector<std::string>& names, const std::vector<Tensor>& ins,
                         const std::vector<Tensor>& outs, ReduceOp op = ReduceOp::kAverage);
/// Asynchronous allgather (result in the handle).
Handle allgather_async(const std::string& name, const Tensor& in);
/// Asynchronous grouped allgather: one negotiated unit, a handle (result) per tensor.
std::vector<Handle> grouped_allgather_async(const std::vector<std::string>& names,
                                            const std::vector<Tensor>& ins);
/// Blocking grouped allgather; the finished handles (results) go to *out.
Status grouped_allgather(const std::vector<std::string>& names, const std::vector<Tensor>& ins,
                         std::vector<Handle>* out);
/// Blocking broadcast from `root`.
Status broadcast(const std::string& name, const Tensor& buf, int root);
/// Asynchronous alltoall (result in the handle).
Handle alltoall_async(const std::string& name, const Tensor& in,
                      const std::vector<int64_t>& splits);
/// Asynchronous reducescatter (result in the handle).
Handle reducescatter_async(const std::string& name, const Tensor& in,
                           ReduceOp op = ReduceOp::kAverage);
/// Asynchronous grouped reducescatter: one negotiated unit, a handle (result) per tensor.
std::vector<Handle> grouped_reducescatter_async(const std::vector<std::string>& names,
                                                const std::vector<Tensor>& ins,
                                                ReduceOp op = ReduceOp::kAverage);
/// Blocking grouped reducescatter; the finished handles (results) go to *out.
Status grouped_reducescatter(const std::vector<std::string>& names, const std::vector<Tensor>& ins,
                             std::vector<Handle>* out, ReduceOp op = ReduceOp::kAverage);
/// Blocks until all ranks arrive.
Status barrier();
/// Joins; returns the last rank to join in *last.
Status join(int* last = nullptr);
/// Collective: creates a process set of the world ranks `ranks`; its id goes to *id.
Status add_process_set(const std::vector<int>& ranks, int* id);
/// Collective: removes process set `id` (created by add_process_set).
Status remove_process_set(int id);

}  // namespace hvd
