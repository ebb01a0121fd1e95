#include "backends/local/adasum_kernels.h"

#include <string>

#include "backends/local/half.h"

namespace hvd {
namespace {

struct F32 {
  using T = float;
  static double get(T v) { return v; }
  static T put(double v) { return static_cast<T>(v); }
};
struct F64 {
  using T = double;
  static double get(T v) { return v; }
  static T put(double v) { return v; }
};
struct F16 {
  using T = uint16_t;
  static double get(T v) { return half_to_float(v); }
  static T put(double v) { return float_to_half(static_cast<float>(v)); }
};

template <class E>
void dot_norms_loop(const void* av, const void* bv, int64_t n, double out[3]) {
  const auto* __restrict a = static_cast<const typename E::T*>(av);
  const auto* __restrict b = static_cast<const typename E::T*>(bv);
  double dot = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = E::get(a[i]), y = E::get(b[i]);
    dot += x * y;
    aa += x * x;
    bb += y * y;
  }
  out[0] = dot;
  out[1] = aa;
  out[2] = bb;
}

template <class E>
void scaled_add_loop(void* av, double ca, const void* bv, double cb, int64_t n) {
  auto* __restrict a = static_cast<typename E::T*>(av);
  const auto* __restrict b = static_cast<const typename E::T*>(bv);
  for (int64_t i = 0; i < n; ++i) a[i] = E::put(ca * E::get(a[i]) + cb * E::get(b[i]));
}

Status unsupported(DataType dt) {
  return Status::InvalidArgument("Adasum is defined for float16, float32 and float64 tensors, not " +
                                 std::string(dtype_name(dt)));
}

}  // namespace

Status dot_norms_host(const void* a, const void* b, int64_t count, DataType dt, double out[3]) {
  out[0] = out[1] = out[2] = 0;
  if (count <= 0) return Status::OK();
  switch (dt) {
    case DataType::kFloat32: dot_norms_loop<F32>(a, b, count, out); return Status::OK();
    case DataType::kFloat64: dot_norms_loop<F64>(a, b, count, out); return Status::OK();
    case DataType::kFloat16: dot_norms_loop<F16>(a, b, count, out); return Status::OK();
    default: return unsupported(dt);
  }
}

Status scaled_add_host(void* a, double ca, const void* b, double cb, int64_t count, DataType dt) {
  if (count <= 0) return Status::OK();
  switch (dt) {
    case DataType::kFloat32: scaled_add_loop<F32>(a, ca, b, cb, count); return Status::OK();
    case DataType::kFloat64: scaled_add_loop<F64>(a, ca, b, cb, count); return Status::OK();
    case DataType::kFloat16: scaled_add_loop<F16>(a, ca, b, cb, count); return Status::OK();
    default: return unsupported(dt);
  }
}

}  // namespace hvd
