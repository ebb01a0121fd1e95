// One templated grid-stride kernel per operation, instantiated per element type; the
// reduction op is a run-time argument (uniform branch) to keep nvcc time small.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>
#include <climits>
#include <type_traits>

#include "backends/nccl/cuda_kernels.h"

namespace hvd::nccl {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;

int blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < kMaxBlocks ? (b > 0 ? b : 1) : kMaxBlocks);
}

// Arithmetic type of each storage type: half types compute in float.
template <class T>
struct Arith {
  using type = T;
};
template <>
struct Arith<__half> {
  using type = float;
};
template <>
struct Arith<__nv_bfloat16> {
  using type = float;
};

template <class T>
__device__ typename Arith<T>::type widen(T v) {
  return v;
}
template <>
__device__ float widen<__half>(__half v) {
  return __half2float(v);
}
template <>
__device__ float widen<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <class T>
__device__ T narrow(typename Arith<T>::type v) {
  return v;
}
template <>
__device__ __half narrow<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __nv_bfloat16 narrow<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

template <class T>
__global__ void reduce_kernel(T* __restrict__ dst, const T* __restrict__ src, int64_t n, int op) {
  using A = typename Arith<T>::type;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const A a = widen(dst[i]), b = widen(src[i]);
    A r;
    switch (op) {
      case 1:
        r = a * b;
        break;
      case 2:
        r = b < a ? b : a;
        break;
      case 3:
        r = a < b ? b : a;
        break;
      default:
        r = a + b;
        break;
    }
    dst[i] = narrow<T>(r);
  }
}

template <class T>
__global__ void scale_kernel(T* buf, int64_t n, double f) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    if constexpr (std::is_integral_v<T>) {
      buf[i] = static_cast<T>(llround(static_cast<double>(buf[i]) * f));
    } else if constexpr (std::is_same_v<T, float>) {
      buf[i] *= static_cast<float>(f);
    } else if constexpr (std::is_same_v<T, double>) {
      buf[i] *= f;
    } else {
      buf[i] = narrow<T>(static_cast<float>(static_cast<double>(widen(buf[i])) * f));
    }
  }
}

template <class T>
__global__ void fill_kernel(T* buf, int64_t n, T v) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    buf[i] = v;
}

struct CopyBatch {
  CopySegment seg[kMaxBatchedCopies];
  int n;
};

// One block per segment (grid.y strides over long segments): 16-byte moves when both
// ends are aligned, bytes otherwise.
__global__ void batched_copy_kernel(CopyBatch b) {
  const CopySegment s = b.seg[blockIdx.y];
  const size_t tid = blockIdx.x * size_t{blockDim.x} + threadIdx.x,
               stride = size_t{gridDim.x} * blockDim.x;
  const bool aligned =
      ((reinterpret_cast<uintptr_t>(s.dst) | reinterpret_cast<uintptr_t>(s.src)) & 15) == 0;
  size_t done = 0;
  if (aligned) {
    const size_t n16 = s.bytes / 16;
    for (size_t i = tid; i < n16; i += stride)
      static_cast<uint4*>(s.dst)[i] = static_cast<const uint4*>(s.src)[i];
    done = n16 * 16;
  }
  for (size_t i = done + tid; i < s.bytes; i += stride)
    static_cast<char*>(s.dst)[i] = static_cast<const char*>(s.src)[i];
}

template <class T>
cudaError_t reduce_t(void* d, const void* s, int64_t n, int op, cudaStream_t st) {
  reduce_kernel<T>
      <<<blocks_for(n), kThreads, 0, st>>>(static_cast<T*>(d), static_cast<const T*>(s), n, op);
  return cudaGetLastError();
}

template <class T>
cudaError_t scale_t(void* b, int64_t n, double f, cudaStream_t st) {
  scale_kernel<T><<<blocks_for(n), kThreads, 0, st>>>(static_cast<T*>(b), n, f);
  return cudaGetLastError();
}

template <class T>
cudaError_t fill_t(void* b, int64_t n, T v, cudaStream_t st) {
  fill_kernel<T><<<blocks_for(n), kThreads, 0, st>>>(static_cast<T*>(b), n, v);
  return cudaGetLastError();
}

// Identity of op as a double (+-inf for floating types; the integer cases override).
double identity(ReduceOp op) {
  switch (op) {
    case ReduceOp::kProduct:
      return 1.0;
    case ReduceOp::kMin:
      return HUGE_VAL;
    case ReduceOp::kMax:
      return -HUGE_VAL;
    default:
      return 0.0;
  }
}

template <class T>
T int_identity(ReduceOp op, T lo, T hi) {
  if (op == ReduceOp::kMin) return hi;
  if (op == ReduceOp::kMax) return lo;
  return static_cast<T>(op == ReduceOp::kProduct ? 1 : 0);
}

}  // namespace

cudaError_t launch_reduce(void* dst, const void* src, int64_t n, DataType dt, ReduceOp op,
                          cudaStream_t st) {
  if (n <= 0) return cudaSuccess;
  const int o = op == ReduceOp::kProduct ? 1
                : op == ReduceOp::kMin   ? 2
                : op == ReduceOp::kMax   ? 3
                                         : 0;
  switch (dt) {
    case DataType::kUInt8:
      return reduce_t<uint8_t>(dst, src, n, o, st);
    case DataType::kInt8:
      return reduce_t<int8_t>(dst, src, n, o, st);
    case DataType::kInt32:
      return reduce_t<int32_t>(dst, src, n, o, st);
    case DataType::kInt64:
      return reduce_t<int64_t>(dst, src, n, o, st);
    case DataType::kFloat16:
      return reduce_t<__half>(dst, src, n, o, st);
    case DataType::kBFloat16:
      return reduce_t<__nv_bfloat16>(dst, src, n, o, st);
    case DataType::kFloat32:
      return reduce_t<float>(dst, src, n, o, st);
    case DataType::kFloat64:
      return reduce_t<double>(dst, src, n, o, st);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_scale(void* buf, int64_t n, DataType dt, double f, cudaStream_t st) {
  if (n <= 0 || f == 1.0) return cudaSuccess;
  switch (dt) {
    case DataType::kUInt8:
      return scale_t<uint8_t>(buf, n, f, st);
    case DataType::kInt8:
      return scale_t<int8_t>(buf, n, f, st);
    case DataType::kInt32:
      return scale_t<int32_t>(buf, n, f, st);
    case DataType::kInt64:
      return scale_t<int64_t>(buf, n, f, st);
    case DataType::kFloat16:
      return scale_t<__half>(buf, n, f, st);
    case DataType::kBFloat16:
      return scale_t<__nv_bfloat16>(buf, n, f, st);
    case DataType::kFloat32:
      return scale_t<float>(buf, n, f, st);
    case DataType::kFloat64:
      return scale_t<double>(buf, n, f, st);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_fill_identity(void* buf, int64_t n, DataType dt, ReduceOp op, cudaStream_t st) {
  if (n <= 0) return cudaSuccess;
  const double v = identity(op);
  switch (dt) {
    case DataType::kUInt8:
      return fill_t<uint8_t>(buf, n, int_identity<uint8_t>(op, 0, UINT8_MAX), st);
    case DataType::kInt8:
      return fill_t<int8_t>(buf, n, int_identity<int8_t>(op, INT8_MIN, INT8_MAX), st);
    case DataType::kInt32:
      return fill_t<int32_t>(buf, n, int_identity<int32_t>(op, INT32_MIN, INT32_MAX), st);
    case DataType::kInt64:
      return fill_t<int64_t>(buf, n, int_identity<int64_t>(op, INT64_MIN, INT64_MAX), st);
    case DataType::kFloat16:
      return fill_t<__half>(buf, n, __double2half(v), st);
    case DataType::kBFloat16:
      return fill_t<__nv_bfloat16>(buf, n, __double2bfloat16(v), st);
    case DataType::kFloat32:
      return fill_t<float>(buf, n, static_cast<float>(v), st);
    case DataType::kFloat64:
      return fill_t<double>(buf, n, v, st);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_batched_copy(const CopySegment* segs, size_t n, cudaStream_t st) {
  if (n == 0) return cudaSuccess;
  if (n > kMaxBatchedCopies) return cudaErrorInvalidValue;
  CopyBatch b{};
  size_t longest = 0;
  for (size_t i = 0; i < n; ++i) {
    b.seg[i] = segs[i];
    longest = longest > segs[i].bytes ? longest : segs[i].bytes;
  }
  b.n = static_cast<int>(n);
  const int64_t per_block = int64_t{kThreads} * 16 * 4;  // ~4 vector moves per thread
  int gx = static_cast<int>((static_cast<int64_t>(longest) + per_block - 1) / per_block);
  gx = gx < 1 ? 1 : (gx > 1024 ? 1024 : gx);
  batched_copy_kernel<<<dim3(gx, static_cast<unsigned>(n)), kThreads, 0, st>>>(b);
  return cudaGetLastError();
}

}  // namespace hvd::nccl
