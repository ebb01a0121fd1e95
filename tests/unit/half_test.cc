#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "backends/local/half.h"
#include "backends/local/reduce_kernels.h"

namespace hvd {
namespace {

TEST(Half, RoundTripsEveryFloat16Exactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = half_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_half(f), h) << std::hex << h;
  }
}

TEST(Half, RoundsToNearestEven) {
  // 2049 lies exactly between the halves 2048 and 2050: ties go to the even mantissa.
  EXPECT_EQ(half_to_float(float_to_half(2049.0f)), 2048.0f);
  EXPECT_EQ(half_to_float(float_to_half(2051.0f)), 2052.0f);
  EXPECT_EQ(half_to_float(float_to_half(2049.5f)), 2050.0f);  // not a tie: nearest
  EXPECT_TRUE(std::isinf(half_to_float(float_to_half(70000.0f))));
  EXPECT_EQ(half_to_float(float_to_half(65519.0f)), 65504.0f);
  EXPECT_EQ(half_to_float(float_to_half(5.9604645e-08f)), 5.9604645e-08f);  // smallest subnormal
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f)), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even → 1.
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.00390625f)), 1.0f);
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.01171875f)), 1.015625f);  // 1 + 3·2^-8 → 1 + 2^-6
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(ReduceKernels, HalfSumIsRoundedOnceNotTruncated) {
  // 1024 + 1.5 in float16: exact sum 1025.5 → nearest half is 1026 (spacing 1 above 1024).
  uint16_t a = float_to_half(1024.0f), b = float_to_half(1.5f);
  reduce_host(&a, &b, 1, DataType::kFloat16, ReduceOp::kSum);
  EXPECT_EQ(half_to_float(a), 1026.0f);
}

TEST(ReduceKernels, IdentityFill) {
  float f[2];
  fill_identity_host(f, 2, DataType::kFloat32, ReduceOp::kMin);
  EXPECT_TRUE(std::isinf(f[0]) && f[0] > 0);
  int32_t i[2];
  fill_identity_host(i, 2, DataType::kInt32, ReduceOp::kProduct);
  EXPECT_EQ(i[1], 1);
  int8_t m[1];
  fill_identity_host(m, 1, DataType::kInt8, ReduceOp::kMax);
  EXPECT_EQ(m[0], -128);
}

}  // namespace
}  // namespace hvd

namespace hvd {
namespace {

// The vectorised kernels (F16C, AVX2) must round exactly like the scalar conversions.
TEST(ReduceKernels, VectorisedHalfKernelsMatchScalarRounding) {
  uint32_t seed = 12345;
  auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
  for (DataType dt : {DataType::kFloat16, DataType::kBFloat16}) {
    const int n = 1003;  // not a multiple of 8: the tail runs the scalar loop
    std::vector<uint16_t> a(n), b(n), out(n);
    for (int i = 0; i < n; ++i) {
      a[i] = static_cast<uint16_t>(next() >> 16);
      b[i] = static_cast<uint16_t>(next() >> 16);
    }
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProduct, ReduceOp::kMin, ReduceOp::kMax}) {
      out = a;
      reduce_host(out.data(), b.data(), n, dt, op);
      for (int i = 0; i < n; ++i) {
        const bool h = dt == DataType::kFloat16;
        const float x = h ? half_to_float(a[i]) : bf16_to_float(a[i]);
        const float y = h ? half_to_float(b[i]) : bf16_to_float(b[i]);
        if (std::isnan(x) || std::isnan(y)) continue;  // NaN payloads may differ
        float r = op == ReduceOp::kSum ? x + y : op == ReduceOp::kProduct ? x * y
                : op == ReduceOp::kMin ? (y < x ? y : x) : (x < y ? y : x);
        const uint16_t want = h ? float_to_half(r) : float_to_bf16(r);
        if (std::isnan(r)) {
          ASSERT_TRUE(std::isnan(h ? half_to_float(out[i]) : bf16_to_float(out[i])));
          continue;
        }
        ASSERT_EQ(out[i], want) << dtype_name(dt) << " " << op_name(op) << " at " << i;
      }
    }
  }
}

}  // namespace
}  // namespace hvd

namespace hvd {
namespace {

// The full-width kernels (AVX2 where the CPU has it) against the scalar definition, for
// every plain dtype and op, odd lengths and misaligned starts, in place and into a third
// array; min/max give a NaN where either operand holds one (torch.minimum / maximum).
template <class T>
void check_kernels(DataType dt) {
  const ReduceOp ops[] = {ReduceOp::kSum, ReduceOp::kProduct, ReduceOp::kMin, ReduceOp::kMax};
  for (ReduceOp op : ops) {
    for (int64_t n : {1, 7, 8, 33, 1000, 4099}) {
      for (int shift : {0, 1, 3}) {
        std::vector<T> a(static_cast<size_t>(n + shift)), b(a.size()), d(a.size());
        for (size_t i = 0; i < a.size(); ++i) {
          a[i] = static_cast<T>((i * 37 + 11) % 23) - static_cast<T>(std::is_signed_v<T> ? 9 : 0);
          b[i] = static_cast<T>((i * 53 + 5) % 19) - static_cast<T>(std::is_signed_v<T> ? 7 : 0);
        }
        if constexpr (std::is_floating_point_v<T>) {
          a[static_cast<size_t>(shift)] = std::numeric_limits<T>::quiet_NaN();
          if (n > 2) b[static_cast<size_t>(shift + 2)] = std::numeric_limits<T>::quiet_NaN();
        }
        auto want = [&](T x, T y) -> T {
          if constexpr (std::is_floating_point_v<T>)
            if ((op == ReduceOp::kMin || op == ReduceOp::kMax) && (x != x || y != y))
              return std::numeric_limits<T>::quiet_NaN();
          switch (op) {
            case ReduceOp::kProduct: return static_cast<T>(x * y);
            case ReduceOp::kMin: return y < x ? y : x;
            case ReduceOp::kMax: return x < y ? y : x;
            default: return static_cast<T>(x + y);
          }
        };
        T* pa = a.data() + shift;
        const T* pb = b.data() + shift;
        T* pd = d.data() + shift;
        reduce_host_into(pd, pa, pb, n, dt, op);
        std::vector<T> before(pa, pa + n);
        reduce_host(pa, pb, n, dt, op);
        for (int64_t i = 0; i < n; ++i) {
          const T w = want(before[static_cast<size_t>(i)], pb[i]);
          const bool both_nan = std::is_floating_point_v<T> && std::isnan(static_cast<double>(w));
          if (both_nan) {
            ASSERT_TRUE(std::isnan(static_cast<double>(pd[i])) && std::isnan(static_cast<double>(pa[i])))
                << "op " << static_cast<int>(op) << " n " << n << " i " << i;
          } else {
            ASSERT_EQ(pd[i], w) << "into: op " << static_cast<int>(op) << " n " << n << " i " << i;
            ASSERT_EQ(pa[i], w) << "in place: op " << static_cast<int>(op) << " n " << n << " i " << i;
          }
        }
      }
    }
  }
}

TEST(ReduceKernels, WideLoopsMatchTheScalarDefinition) {
  check_kernels<float>(DataType::kFloat32);
  check_kernels<double>(DataType::kFloat64);
  check_kernels<int32_t>(DataType::kInt32);
  check_kernels<int64_t>(DataType::kInt64);
  check_kernels<int8_t>(DataType::kInt8);
  check_kernels<uint8_t>(DataType::kUInt8);
}

// Min and Max give a NaN wherever either operand holds one (torch.minimum / maximum), in
// every float type, in place and into a third buffer, in the vector loops and their tails.
TEST(ReduceKernels, MinMaxPropagateANaNFromEitherOperand) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t n = 19;
  for (DataType dt : {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16}) {
    const size_t es = dtype_size(dt);
    auto put = [&](std::vector<uint8_t>& b, int64_t i, float v) {
      uint8_t* p = b.data() + i * static_cast<int64_t>(es);
      if (dt == DataType::kFloat32) std::memcpy(p, &v, 4);
      else if (dt == DataType::kFloat64) { double d = v; std::memcpy(p, &d, 8); }
      else { uint16_t h = dt == DataType::kFloat16 ? float_to_half(v) : float_to_bf16(v); std::memcpy(p, &h, 2); }
    };
    auto get = [&](const std::vector<uint8_t>& b, int64_t i) {
      const uint8_t* p = b.data() + i * static_cast<int64_t>(es);
      if (dt == DataType::kFloat32) { float f; std::memcpy(&f, p, 4); return static_cast<double>(f); }
      if (dt == DataType::kFloat64) { double d; std::memcpy(&d, p, 8); return d; }
      uint16_t h;
      std::memcpy(&h, p, 2);
      return static_cast<double>(dt == DataType::kFloat16 ? half_to_float(h) : bf16_to_float(h));
    };
    for (ReduceOp op : {ReduceOp::kMin, ReduceOp::kMax}) {
      for (bool in_place : {true, false}) {
        std::vector<uint8_t> a(n * es), b(n * es), d(n * es);
        for (int64_t i = 0; i < n; ++i) {
          put(a, i, i == 1 || i == 17 ? nan : static_cast<float>(i));
          put(b, i, i == 4 || i == 18 ? nan : static_cast<float>(i + 1));
        }
        if (in_place) {
          reduce_host(a.data(), b.data(), n, dt, op);
          d = a;
        } else {
          reduce_host_into(d.data(), a.data(), b.data(), n, dt, op);
        }
        for (int64_t i = 0; i < n; ++i) {
          const bool want_nan = i == 1 || i == 17 || i == 4 || i == 18;
          if (want_nan) EXPECT_TRUE(std::isnan(get(d, i))) << dtype_name(dt) << " [" << i << "]";
          else EXPECT_EQ(get(d, i), static_cast<double>(op == ReduceOp::kMin ? i : i + 1)) << dtype_name(dt) << " [" << i << "]";
        }
      }
    }
  }
}

}  // namespace
}  // namespace hvd
