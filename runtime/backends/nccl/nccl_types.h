// Mapping of hvd's element types and reductions onto NCCL's, and of CUDA / NCCL error
// codes onto hvd::Status. Host code only (no kernels): unit-tested without a GPU.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

#include "hvd/status.h"
#include "hvd/types.h"

namespace hvd::nccl {

/// NCCL's version as a number (NCCL_VERSION_CODE form, e.g. 22809 for 2.28.9).
int nccl_version();
/// True when NCCL of version `version` has ncclAvg (2.10 and later).
bool has_nccl_avg(int version);

/// The ncclDataType_t of `dt`; kInvalidArgument if NCCL has no such type.
Status to_nccl_type(DataType dt, ncclDataType_t* out);

/// A reduction as NCCL runs it: the op, then a scale the caller applies on the device.
struct NcclReduction {
  ncclRedOp_t op = ncclSum;  ///< what NCCL computes
  double postscale = 1.0;    ///< multiply the result by this afterwards (1: nothing)
};

/// How `op` over `group_size` ranks runs in NCCL `version`: average is ncclAvg for
/// floating-point types when NCCL has it, else ncclSum and postscale 1/group_size (and
/// always for integers, whose average hvd rounds to nearest as the host path does).
Status to_nccl_reduction(ReduceOp op, DataType dt, int group_size, int version, NcclReduction* out);

/// True for floating-point element types.
bool is_floating(DataType dt);

/// Where a pointer's memory lives, as far as routing a transfer is concerned.
enum class MemorySpace { kHost, kDevice };
/// Classifies a cudaPointerAttributes::type: device and managed memory go over NCCL,
/// everything else (pageable, pinned, unregistered host memory) over the host transport.
MemorySpace memory_space_of(cudaMemoryType type);

/// OK, or kInternal naming `what` and CUDA's error string.
Status cuda_status(cudaError_t e, const char* what);
/// OK, or kInternal naming `what`, NCCL's error string and ncclGetLastError().
Status nccl_status(ncclResult_t r, const char* what);

}  // namespace hvd::nccl
