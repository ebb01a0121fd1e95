#include "collectives/reduce_kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "collectives/half.h"

namespace hvd {
namespace {

struct Sum { template <class T> static T apply(T a, T b) { return a + b; } };
struct Prod { template <class T> static T apply(T a, T b) { return a * b; } };
struct Min { template <class T> static T apply(T a, T b) { return b < a ? b : a; } };
struct Max { template <class T> static T apply(T a, T b) { return a < b ? b : a; } };

template <class T, class Op>
void reduce_loop(T* __restrict d, const T* __restrict s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<T>(Op::apply(d[i], s[i]));
}

template <class Op, float (*ToF)(uint16_t), uint16_t (*FromF)(float)>
void reduce_half_loop(uint16_t* __restrict d, const uint16_t* __restrict s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = FromF(Op::apply(ToF(d[i]), ToF(s[i])));
}

template <class Op>
void reduce_typed(void* dst, const void* src, int64_t n, DataType dt) {
  switch (dt) {
    case DataType::kUInt8: return reduce_loop<uint8_t, Op>((uint8_t*)dst, (const uint8_t*)src, n);
    case DataType::kInt8: return reduce_loop<int8_t, Op>((int8_t*)dst, (const int8_t*)src, n);
    case DataType::kInt32: return reduce_loop<int32_t, Op>((int32_t*)dst, (const int32_t*)src, n);
    case DataType::kInt64: return reduce_loop<int64_t, Op>((int64_t*)dst, (const int64_t*)src, n);
    case DataType::kFloat32: return reduce_loop<float, Op>((float*)dst, (const float*)src, n);
    case DataType::kFloat64: return reduce_loop<double, Op>((double*)dst, (const double*)src, n);
    case DataType::kFloat16:
      return reduce_half_loop<Op, half_to_float, float_to_half>((uint16_t*)dst,
                                                                (const uint16_t*)src, n);
    case DataType::kBFloat16:
      return reduce_half_loop<Op, bf16_to_float, float_to_bf16>((uint16_t*)dst,
                                                                (const uint16_t*)src, n);
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

void reduce_host(void* dst, const void* src, int64_t count, DataType dt, ReduceOp op) {
  if (count <= 0) return;
  switch (op) {
    case ReduceOp::kAverage:
    case ReduceOp::kSum: return reduce_typed<Sum>(dst, src, count, dt);
    case ReduceOp::kProduct: return reduce_typed<Prod>(dst, src, count, dt);
    case ReduceOp::kMin: return reduce_typed<Min>(dst, src, count, dt);
    case ReduceOp::kMax: return reduce_typed<Max>(dst, src, count, dt);
  }
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
