// The NCCL baseline of hvdbench --device gpu (and of the GPU tests): ncclAllReduce called
// directly on the communicator of the NCCL backend's world, timed as nccl-tests times it.
// Benchmark helpers, not the runtime's API: built from bench/ on the backend's internals
// (backends/nccl), only when the NCCL backend is (target hvdbench_nccl).
#pragma once

#include <cstddef>
#include <cstdint>

#include "hvd/status.h"
#include "hvd/transport.h"
#include "hvd/types.h"

namespace hvd::bench {

/// The baseline for benchmarks: ncclAllReduce (float32, sum, in place, `bytes` bytes) called
/// directly on `nccl_world`'s communicator, `warmup` + `iters` times back to back, timed with
/// CUDA events; *seconds = mean time of one call. Collective: every rank calls it. kInvalidArgument
/// when `nccl_world` is not from make_nccl_world.
Status time_direct_nccl_allreduce(Transport& nccl_world, size_t bytes, int warmup, int iters,
                                  double* seconds);

/// What time_direct_nccl_allreduce runs on: caller's device buffers (e.g. those an hvd
/// allreduce just used, so both are timed on the same memory).
struct DirectAllreduce {
  const void* send = nullptr;  ///< device memory, `count` elements
  void* recv = nullptr;        ///< device memory (may equal send: in place)
  int64_t count = 0;           ///< elements
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;  ///< average: ncclAvg (floats, NCCL >= 2.10) else sum
  int warmup = 5;                ///< untimed calls first
  int iters = 20;                ///< timed calls
};

/// nccl-tests' timing of ncclAllReduce straight on `nccl_world`'s communicator: warm-up
/// calls, a device barrier, then `iters` calls enqueued back to back on the communicator's
/// stream and one cudaStreamSynchronize, timed on the host clock; *seconds = that time / iters
/// on this rank (take the slowest rank's). Collective. kInvalidArgument for a transport not
/// from make_nccl_world, null buffers, count < 1 or iters < 1.
Status time_direct_nccl_allreduce(Transport& nccl_world, const DirectAllreduce& what,
                                  double* seconds);

}  // namespace hvd::bench
