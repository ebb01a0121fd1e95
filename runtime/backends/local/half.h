// IEEE float16 and bfloat16 <-> float conversions with round-to-nearest-even, so half
// tensors are reduced in float and rounded once (never by truncating casts).
#pragma once

#include <cstdint>
#include <cstring>

namespace hvd {

/// float16 bits → float (exact).
inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf / nan
  } else if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400) == 0) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// float → float16 bits, round to nearest even, overflow to inf, NaN kept.
inline uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | (ax > 0x7f800000u ? 0x7e00 : 0x7c00);
  if (ax >= 0x477ff000u) return sign | 0x7c00;  // rounds to >= 65520: inf
  if (ax < 0x38800000u) {                       // below the smallest normal half
    if (ax < 0x33000000u) return sign;          // rounds to zero
    const uint32_t e = ax >> 23;
    const uint32_t m = (ax & 0x7fffff) | 0x800000;
    const uint32_t shift = 126 - e;  // half subnormal = m * 2^(e - 126) units of 2^-24
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;  // may carry into the smallest normal
    return sign | static_cast<uint16_t>(q);
  }
  uint32_t r = ax - 0x38000000u;  // rebias exponent 127 → 15
  const uint32_t rem = r & 0x1fff;
  r >>= 13;
  if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) ++r;
  return sign | static_cast<uint16_t>(r);
}

/// bfloat16 bits → float (exact).
inline float bf16_to_float(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// float → bfloat16 bits, round to nearest even, NaN kept quiet (branch-free, so loops
/// over it vectorise).
inline uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (x >> 16) | 0x40u;
  return static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
}

}  // namespace hvd
