// --device gpu: the NCCL world of a rank and the few GPU operations hvdbench needs
// (host <-> device copies, NCCL's own allreduce as the peer of collective mode), with no
// CUDA header here. Built without the NCCL backend, every call says so instead.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "hvd/device.h"
#include "hvd/status.h"
#include "hvd/transport.h"

namespace hvd::bench {

/// True when this hvdbench was built with the NCCL backend (hvd::nccl).
bool built_with_nccl();

/// Why `--device gpu` cannot run in this process, with the exit code that goes with it:
/// exit_code 0 and an empty reason when it can. Without the NCCL backend: kExitBadInput
/// (this build cannot do what the command line asks); without a usable GPU or driver:
/// kExitRuntimeFailure (the machine, not the command line).
struct GpuVerdict {
  int exit_code = 0;
  std::string reason;  ///< one line, no "hvdbench:" prefix
};
GpuVerdict check_gpu_here();

/// GPUs this process sees (0 without the NCCL backend, a driver or a device).
int gpu_count();

/// Builds the NCCL world over `host` (collective over it): GPU local_rank modulo the GPUs
/// this process sees. On failure every rank gets the same status (the backend agrees).
Status make_gpu_world(Transport& host, std::unique_ptr<Transport>* world,
                      std::unique_ptr<Device>* gpu);

/// Copies between host and device memory; done when it returns.
Status gpu_copy(void* dst, const void* src, size_t bytes);

/// Mean seconds per ncclAllReduce(send -> recv, count elements) called directly on the
/// communicator of `world` (from make_gpu_world), nccl-tests style. Collective.
Status time_nccl_allreduce(Transport& world, const void* send, void* recv, int64_t count,
                           DataType dt, ReduceOp op, int warmup, int iters, double* seconds);

/// A GPU Device of its own (no NCCL world): GPU local_rank modulo the GPUs this process
/// sees, asynchronous (Device::synchronize() waits for its work), and the GPU's name.
/// What hvdbench --calibrate --device gpu measures copy and reduce rates on.
Status make_gpu_device(int local_rank, std::unique_ptr<Device>* gpu, std::string* name);

/// "NCCL 2.28.9, CUDA runtime 13.0, driver 13.0" or "no NCCL backend".
std::string gpu_versions();

}  // namespace hvd::bench
