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
__device__ T combine(T x, T y, int op) {
  using A = typename Arith<T>::type;
  const A a = widen(x), b = widen(y);
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
  return narrow<T>(r);
}

template <class T>
__device__ T scaled(T v, double f) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(llround(static_cast<double>(v) * f));
  } else if constexpr (std::is_same_v<T, float>) {
    return v * static_cast<float>(f);
  } else if constexpr (std::is_same_v<T, double>) {
    return v * f;
  } else {
    return narrow<T>(static_cast<float>(static_cast<double>(widen(v)) * f));
  }
}

// Elements per 16-byte vector: every thread moves whole uint4s (one 128-bit load or store
// per operand), the element-wise work runs on registers. One element per thread would issue
// 1-, 2- or 4-byte accesses and leave 8- and 16-bit types at a third to a half of the
// memory bandwidth a copy reaches (measured on an H200: docs/nccl.md, "GPU checks").
template <class T>
constexpr int kLanes = 16 / static_cast<int>(sizeof(T));

// The elements [lo, hi) of n that fill whole 16-byte vectors at both addresses: possible
// when a and b sit at the same offset within 16 bytes (always for the runtime's buffers,
// which are 2 MiB-aligned allocations with fused tensors at matching offsets); lo = hi = 0
// otherwise.
template <class T>
__device__ void vector_span(const void* a, const void* b, int64_t n, int64_t* lo, int64_t* hi) {
  const uintptr_t pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
  if (((pa ^ pb) & 15) != 0 || pa % sizeof(T) != 0) {
    *lo = *hi = 0;
    return;
  }
  int64_t head = static_cast<int64_t>(((16 - (pa & 15)) & 15) / sizeof(T));
  head = head < n ? head : n;
  *lo = head;
  *hi = head + (n - head) / kLanes<T> * kLanes<T>;
}

// Element index of the j-th element outside [lo, hi): the head, then the tail.
__device__ int64_t outside(int64_t j, int64_t lo, int64_t hi) {
  return j < lo ? j : hi + (j - lo);
}

// Grid-stride over n elements: whole 16-byte vectors where vector_span allows, the head and
// tail (or everything) element by element. Same arithmetic either way, so results do not
// depend on alignment (test DeviceKernels.KernelsAtEveryAlignmentAndLength).
template <class T>
__global__ void reduce_kernel(T* __restrict__ dst, const T* __restrict__ src, int64_t n, int op) {
  constexpr int V = kLanes<T>;
  const int64_t tid = blockIdx.x * int64_t{blockDim.x} + threadIdx.x, stride = int64_t{gridDim.x} * blockDim.x;
  int64_t lo, hi;
  vector_span<T>(dst, src, n, &lo, &hi);
  uint4* d4 = reinterpret_cast<uint4*>(dst + lo);
  const uint4* s4 = reinterpret_cast<const uint4*>(src + lo);
  for (int64_t i = tid; i < (hi - lo) / V; i += stride) {
    uint4 x = d4[i];
    const uint4 y = __ldg(s4 + i);
    T* xe = reinterpret_cast<T*>(&x);
    const T* ye = reinterpret_cast<const T*>(&y);
#pragma unroll
    for (int k = 0; k < V; ++k) xe[k] = combine(xe[k], ye[k], op);
    d4[i] = x;
  }
  for (int64_t j = tid; j < n - (hi - lo); j += stride) {
    const int64_t i = outside(j, lo, hi);
    dst[i] = combine(dst[i], src[i], op);
  }
}

template <class T>
__global__ void scale_kernel(T* buf, int64_t n, double f) {
  constexpr int V = kLanes<T>;
  const int64_t tid = blockIdx.x * int64_t{blockDim.x} + threadIdx.x, stride = int64_t{gridDim.x} * blockDim.x;
  int64_t lo, hi;
  vector_span<T>(buf, buf, n, &lo, &hi);
  uint4* b4 = reinterpret_cast<uint4*>(buf + lo);
  for (int64_t i = tid; i < (hi - lo) / V; i += stride) {
    uint4 x = b4[i];
    T* xe = reinterpret_cast<T*>(&x);
#pragma unroll
    for (int k = 0; k < V; ++k) xe[k] = scaled(xe[k], f);
    b4[i] = x;
  }
  for (int64_t j = tid; j < n - (hi - lo); j += stride) {
    const int64_t i = outside(j, lo, hi);
    buf[i] = scaled(buf[i], f);
  }
}

template <class T>
__global__ void fill_kernel(T* buf, int64_t n, T v) {
  constexpr int V = kLanes<T>;
  const int64_t tid = blockIdx.x * int64_t{blockDim.x} + threadIdx.x, stride = int64_t{gridDim.x} * blockDim.x;
  int64_t lo, hi;
  vector_span<T>(buf, buf, n, &lo, &hi);
  uint4 x;
  T* xe = reinterpret_cast<T*>(&x);
#pragma unroll
  for (int k = 0; k < V; ++k) xe[k] = v;
  uint4* b4 = reinterpret_cast<uint4*>(buf + lo);
  for (int64_t i = tid; i < (hi - lo) / V; i += stride) b4[i] = x;
  for (int64_t j = tid; j < n - (hi - lo); j += stride) buf[outside(j, lo, hi)] = v;
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

// Threads for n elements of T: one per 16-byte vector (the tail is shorter than a vector).
template <class T>
int blocks_for_vectors(int64_t n) {
  return blocks_for((n + kLanes<T> - 1) / kLanes<T>);
}

template <class T>
cudaError_t reduce_t(void* d, const void* s, int64_t n, int op, cudaStream_t st) {
  reduce_kernel<T>
      <<<blocks_for_vectors<T>(n), kThreads, 0, st>>>(static_cast<T*>(d), static_cast<const T*>(s), n, op);
  return cudaGetLastError();
}

template <class T>
cudaError_t scale_t(void* b, int64_t n, double f, cudaStream_t st) {
  scale_kernel<T><<<blocks_for_vectors<T>(n), kThreads, 0, st>>>(static_cast<T*>(b), n, f);
  return cudaGetLastError();
}

template <class T>
cudaError_t fill_t(void* b, int64_t n, T v, cudaStream_t st) {
  fill_kernel<T><<<blocks_for_vectors<T>(n), kThreads, 0, st>>>(static_cast<T*>(b), n, v);
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
