// Element-wise CUDA kernels of the GPU Device: reduce, scale, identity fill (every hvd
// dtype, half types through cuda_fp16.h / cuda_bf16.h) and a batched copy that moves many
// small fusion-buffer pieces in one launch. All are asynchronous on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "backends/nccl/nccl_plan.h"
#include "hvd/types.h"

namespace hvd::nccl {

/// dst[i] = dst[i] (op) src[i] (op is never kAverage; treated as sum).
cudaError_t launch_reduce(void* dst, const void* src, int64_t count, DataType dt, ReduceOp op,
                          cudaStream_t stream);
/// buf[i] *= factor: float32 in float, integers rounded to nearest (as the host path).
cudaError_t launch_scale(void* buf, int64_t count, DataType dt, double factor, cudaStream_t stream);
/// buf[i] = identity of op (0, 1, +inf/max, -inf/lowest).
cudaError_t launch_fill_identity(void* buf, int64_t count, DataType dt, ReduceOp op,
                                 cudaStream_t stream);
/// Copies up to kMaxBatchedCopies device-to-device segments in one launch.
cudaError_t launch_batched_copy(const CopySegment* segs, size_t n, cudaStream_t stream);
/// Segments one batched-copy launch carries (they travel as a kernel parameter).
inline constexpr size_t kMaxBatchedCopies = 32;

}  // namespace hvd::nccl
