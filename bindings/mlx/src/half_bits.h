// float16 and bfloat16 to and from float, rounding to nearest even: what
// the probes of ops.cpp encode and the fallback reductions compute with.
#pragma once

#include <cstdint>
#include <cstring>

namespace mcl::mpi {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

inline float bf16ToFloat(uint16_t h) { return bitsFloat(uint32_t(h) << 16); }

inline uint16_t floatToBf16(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);
  u += ((u >> 16) & 1) + 0x7fff;
  return uint16_t(u >> 16);
}

inline float halfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0x1f) return bitsFloat(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0)
    return bitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return bitsFloat(sign);
  // Subnormal: normalise.
  int shift = 0;
  while ((mantissa & 0x400) == 0) {
    mantissa <<= 1;
    ++shift;
  }
  return bitsFloat(sign | uint32_t(113 - shift) << 23 |
                   ((mantissa & 0x3ff) << 13));
}

inline uint16_t floatToHalf(float f) {
  const uint32_t u = floatBits(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000);
  const uint32_t magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return uint16_t(sign | 0x7e00);   // NaN
  if (magnitude >= 0x477ff000u) return uint16_t(sign | 0x7c00);  // overflow
  if (magnitude < 0x38800000u) {  // subnormal or zero in half
    const float scaled = bitsFloat(magnitude) * 16777216.0f;  // 2^24
    // Round to nearest even in units of 2^-24.
    const uint32_t units = uint32_t(scaled);
    const float rest = scaled - float(units);
    uint32_t rounded = units;
    if (rest > 0.5f || (rest == 0.5f && (units & 1))) ++rounded;
    return uint16_t(sign | rounded);
  }
  uint32_t bits = magnitude - 0x38000000u;  // rebias 127 -> 15
  bits += 0xfff + ((bits >> 13) & 1);
  return uint16_t(sign | (bits >> 13));
}

}  // namespace mcl::mpi
