#include "backends/local/reduce_kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/local/half.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace hvd {
namespace {

struct Sum { template <class T> static T apply(T a, T b) { return a + b; } };
struct Prod { template <class T> static T apply(T a, T b) { return a * b; } };
// Min and Max propagate a NaN from either side, as torch.minimum / torch.maximum do (a
// comparison alone would keep or drop it depending on the operands' order).
template <class T>
constexpr bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}
struct Min {
  template <class T> static T apply(T a, T b) { return is_nan(b) ? b : (b < a ? b : a); }
};
struct Max {
  template <class T> static T apply(T a, T b) { return is_nan(b) ? b : (a < b ? b : a); }
};

// Two loops per kernel: d == a (in place, the common case) and three distinct arrays,
// each with __restrict so the compiler vectorises without run-time overlap checks.
#if defined(__x86_64__)
// Min / Max of 8 floats, a NaN on either side giving a NaN (x + y is one where either is).
template <class Op>
__attribute__((target("avx"))) inline __m256 min_max_ps(__m256 x, __m256 y) {
  __m256 r = std::is_same_v<Op, Min> ? _mm256_min_ps(y, x) : _mm256_max_ps(y, x);
  return _mm256_blendv_ps(r, _mm256_add_ps(x, y), _mm256_cmp_ps(x, y, _CMP_UNORD_Q));
}

// float16 with the F16C conversions (8 lanes at a time, round to nearest even, as
// float_to_half); false when the CPU lacks F16C/AVX so the portable loop runs.
template <class Op>
__attribute__((target("avx,f16c"))) void f16c_loop(uint16_t* d, const uint16_t* a,
                                                   const uint16_t* b, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    __m256 y = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    __m256 r;
    if constexpr (std::is_same_v<Op, Sum>) r = _mm256_add_ps(x, y);
    else if constexpr (std::is_same_v<Op, Prod>) r = _mm256_mul_ps(x, y);
    else r = min_max_ps<Op>(x, y);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm256_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; ++i) d[i] = float_to_half(Op::apply(half_to_float(a[i]), half_to_float(b[i])));
}

// bfloat16 with AVX2: widen by a 16-bit shift, combine in float, round to nearest even
// with integer arithmetic (as float_to_bf16), keep NaNs quiet.
__attribute__((target("avx2"))) inline __m256 bf16x8_to_ps(const uint16_t* p) {
  __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

template <class Op>
__attribute__((target("avx2"))) void bf16_avx2_loop(uint16_t* d, const uint16_t* a,
                                                    const uint16_t* b, int64_t n) {
  const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff);
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
  const __m256i quiet = _mm256_set1_epi32(0x40);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 x = bf16x8_to_ps(a + i), y = bf16x8_to_ps(b + i), r;
    if constexpr (std::is_same_v<Op, Sum>) r = _mm256_add_ps(x, y);
    else if constexpr (std::is_same_v<Op, Prod>) r = _mm256_mul_ps(x, y);
    else r = min_max_ps<Op>(x, y);
    __m256i bits = _mm256_castps_si256(r);
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), one);
    __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(bits, bias), lsb), 16);
    __m256i nan = _mm256_or_si256(_mm256_srli_epi32(bits, 16), quiet);
    __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, abs_mask), inf);
    __m256i out = _mm256_blendv_epi8(rounded, nan, is_nan);
    __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(out), _mm256_extracti128_si256(out, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), packed);
  }
  for (; i < n; ++i) d[i] = float_to_bf16(Op::apply(bf16_to_float(a[i]), bf16_to_float(b[i])));
}

template <class Op>
bool reduce_bf16_avx2(void* d, const void* a, const void* b, int64_t n) {
  static const bool ok = __builtin_cpu_supports("avx2");
  if (!ok) return false;
  bf16_avx2_loop<Op>(static_cast<uint16_t*>(d), static_cast<const uint16_t*>(a),
                     static_cast<const uint16_t*>(b), n);
  return true;
}

// F16C by CPUID (leaf 1, ECX bit 29): clang 14's __builtin_cpu_supports rejects "f16c"
// (gcc accepts it); "avx" there also checks that the OS saves the YMM registers.
bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 &&
         (ecx & bit_F16C) != 0;
}

template <class Op>
bool reduce_f16c(void* d, const void* a, const void* b, int64_t n) {
  static const bool ok = cpu_has_f16c();
  if (!ok) return false;
  f16c_loop<Op>(static_cast<uint16_t*>(d), static_cast<const uint16_t*>(a),
                static_cast<const uint16_t*>(b), n);
  return true;
}
#else
template <class Op>
bool reduce_f16c(void*, const void*, const void*, int64_t) { return false; }
template <class Op>
bool reduce_bf16_avx2(void*, const void*, const void*, int64_t) { return false; }
#endif

template <class T, class Op>
void reduce_loop(T* __restrict d, const T* __restrict s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<T>(Op::apply(d[i], s[i]));
}
template <class T, class Op>
void reduce_loop3(T* __restrict d, const T* __restrict a, const T* __restrict b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<T>(Op::apply(a[i], b[i]));
}

#if defined(__x86_64__)
// The same loops compiled for AVX2 (the default build targets baseline x86-64, SSE2):
// 256-bit lanes double what a reduction of data in cache does per cycle (a 1 MiB float32
// sum: ~2x here); the arithmetic is the same IEEE operations, so results are identical.
template <class T, class Op>
__attribute__((target("avx2"))) void reduce_loop_avx2(T* __restrict d, const T* __restrict s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<T>(Op::apply(d[i], s[i]));
}
template <class T, class Op>
__attribute__((target("avx2"))) void reduce_loop3_avx2(T* __restrict d, const T* __restrict a,
                                                       const T* __restrict b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<T>(Op::apply(a[i], b[i]));
}
#endif

template <class T, class Op>
void reduce_any(void* d, const void* a, const void* b, int64_t n) {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) {
    if (d == a) return reduce_loop_avx2<T, Op>(static_cast<T*>(d), static_cast<const T*>(b), n);
    return reduce_loop3_avx2<T, Op>(static_cast<T*>(d), static_cast<const T*>(a), static_cast<const T*>(b), n);
  }
#endif
  if (d == a) return reduce_loop<T, Op>(static_cast<T*>(d), static_cast<const T*>(b), n);
  reduce_loop3<T, Op>(static_cast<T*>(d), static_cast<const T*>(a), static_cast<const T*>(b), n);
}

template <class Op, float (*ToF)(uint16_t), uint16_t (*FromF)(float)>
void reduce_half_loop(void* dv, const void* av, const void* bv, int64_t n) {
  uint16_t* d = static_cast<uint16_t*>(dv);
  const uint16_t* a = static_cast<const uint16_t*>(av);
  const uint16_t* b = static_cast<const uint16_t*>(bv);
  for (int64_t i = 0; i < n; ++i) d[i] = FromF(Op::apply(ToF(a[i]), ToF(b[i])));
}

template <class Op>
void reduce_typed(void* d, const void* a, const void* b, int64_t n, DataType dt) {
  switch (dt) {
    case DataType::kUInt8: return reduce_any<uint8_t, Op>(d, a, b, n);
    case DataType::kInt8: return reduce_any<int8_t, Op>(d, a, b, n);
    case DataType::kInt32: return reduce_any<int32_t, Op>(d, a, b, n);
    case DataType::kInt64: return reduce_any<int64_t, Op>(d, a, b, n);
    case DataType::kFloat32: return reduce_any<float, Op>(d, a, b, n);
    case DataType::kFloat64: return reduce_any<double, Op>(d, a, b, n);
    case DataType::kFloat16:
      if (reduce_f16c<Op>(d, a, b, n)) return;
      return reduce_half_loop<Op, half_to_float, float_to_half>(d, a, b, n);
    case DataType::kBFloat16:
      if (reduce_bf16_avx2<Op>(d, a, b, n)) return;
      return reduce_half_loop<Op, bf16_to_float, float_to_bf16>(d, a, b, n);
  }
}

template <class T>
void scale_loop(T* b, int64_t n, double f) {
  if constexpr (std::is_integral_v<T>) {
    // Round to nearest: averaging 21 over 7 ranks must give 3, not 2.9999999 → 2.
    for (int64_t i = 0; i < n; ++i) b[i] = static_cast<T>(std::llround(static_cast<double>(b[i]) * f));
  } else {
    for (int64_t i = 0; i < n; ++i) b[i] = static_cast<T>(static_cast<double>(b[i]) * f);
  }
}

template <class T>
void fill_loop(T* b, int64_t n, ReduceOp op) {
  T v = T(0);
  if (op == ReduceOp::kProduct) v = T(1);
  if (op == ReduceOp::kMin) v = std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
  if (op == ReduceOp::kMax) v = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  std::fill(b, b + n, v);
}

}  // namespace

void reduce_host_into(void* dst, const void* a, const void* b, int64_t count, DataType dt,
                      ReduceOp op) {
  if (count <= 0) return;
  switch (op) {
    case ReduceOp::kAverage:
    case ReduceOp::kSum: return reduce_typed<Sum>(dst, a, b, count, dt);
    case ReduceOp::kProduct: return reduce_typed<Prod>(dst, a, b, count, dt);
    case ReduceOp::kMin: return reduce_typed<Min>(dst, a, b, count, dt);
    case ReduceOp::kMax: return reduce_typed<Max>(dst, a, b, count, dt);
    case ReduceOp::kAdasum: return;  // not element-wise: collectives/adasum.h, never here
  }
}

void reduce_host(void* dst, const void* src, int64_t count, DataType dt, ReduceOp op) {
  reduce_host_into(dst, dst, src, count, dt, op);
}

void scale_host(void* buf, int64_t n, DataType dt, double f) {
  if (n <= 0 || f == 1.0) return;
  switch (dt) {
    case DataType::kUInt8: return scale_loop((uint8_t*)buf, n, f);
    case DataType::kInt8: return scale_loop((int8_t*)buf, n, f);
    case DataType::kInt32: return scale_loop((int32_t*)buf, n, f);
    case DataType::kInt64: return scale_loop((int64_t*)buf, n, f);
    case DataType::kFloat32: {
      float* b = static_cast<float*>(buf);
      const float ff = static_cast<float>(f);
      for (int64_t i = 0; i < n; ++i) b[i] *= ff;
      return;
    }
    case DataType::kFloat64: return scale_loop((double*)buf, n, f);
    case DataType::kFloat16: {
      uint16_t* b = static_cast<uint16_t*>(buf);
      for (int64_t i = 0; i < n; ++i) b[i] = float_to_half(static_cast<float>(half_to_float(b[i]) * f));
      return;
    }
    case DataType::kBFloat16: {
      uint16_t* b = static_cast<uint16_t*>(buf);
      for (int64_t i = 0; i < n; ++i) b[i] = float_to_bf16(static_cast<float>(bf16_to_float(b[i]) * f));
      return;
    }
  }
}

void fill_identity_host(void* buf, int64_t n, DataType dt, ReduceOp op) {
  if (n <= 0) return;
  switch (dt) {
    case DataType::kUInt8: return fill_loop((uint8_t*)buf, n, op);
    case DataType::kInt8: return fill_loop((int8_t*)buf, n, op);
    case DataType::kInt32: return fill_loop((int32_t*)buf, n, op);
    case DataType::kInt64: return fill_loop((int64_t*)buf, n, op);
    case DataType::kFloat32: return fill_loop((float*)buf, n, op);
    case DataType::kFloat64: return fill_loop((double*)buf, n, op);
    case DataType::kFloat16:
    case DataType::kBFloat16: {
      float v[1];
      fill_loop(v, 1, op);
      const uint16_t h = dt == DataType::kFloat16 ? float_to_half(v[0]) : float_to_bf16(v[0]);
      std::fill(static_cast<uint16_t*>(buf), static_cast<uint16_t*>(buf) + n, h);
      return;
    }
  }
}

}  // namespace hvd
