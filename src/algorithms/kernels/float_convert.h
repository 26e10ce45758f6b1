// Exact conversions between float and the narrow float formats mcl reduces:
// IEEE binary16 (half), bfloat16, and OCP FP8 E4M3 / E5M2, each held as raw
// bits in a uint16_t or uint8_t.
//
// Narrowing rounds to nearest, ties to even, and handles subnormals, signed
// zero, infinity and NaN. A NaN stays a NaN (made quiet, keeping its sign and
// the top payload bits, as F16C and Arm FCVT do). Per format:
//  - half, E5M2: IEEE overflow; anything that rounds past the largest finite
//    value (65504, 57344) becomes infinity.
//  - bfloat16: the top half of a float; values that round past its largest
//    finite value (just under float's) become infinity.
//  - E4M3 (OCP "fn" flavour): no infinities, NaN is only 0x7f/0xff, largest
//    finite 448. Narrowing SATURATES: anything above 448 in magnitude,
//    infinity included, becomes +-448.
//
// The scalar functions are inline and branch-light so reduction loops can use
// them directly; halfToFloatArray/floatToHalfArray add the CPU's conversion
// instructions and are bit-identical to the scalar functions.
#ifndef MCL_ALGORITHMS_KERNELS_FLOAT_CONVERT_H_
#define MCL_ALGORITHMS_KERNELS_FLOAT_CONVERT_H_

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace mcl::kernels {

inline uint32_t floatBits(float value) {
  return std::bit_cast<uint32_t>(value);
}
inline float floatFromBits(uint32_t bits) { return std::bit_cast<float>(bits); }

namespace detail {

constexpr uint32_t kFloatAbsMask = 0x7fffffffu;
constexpr uint32_t kFloatInfBits = 0x7f800000u;
constexpr uint32_t kFloatQuietBit = 0x00400000u;

// Rounds the magnitude of a finite float (sign bit clear) to a binary format
// with kMantBits fraction bits and exponent bias kBias, to nearest even, and
// returns the result's magnitude bits. A value that rounds up past the
// largest finite exponent carries into the all-ones exponent (infinity for
// IEEE-like formats); callers catch values too large for that to be right.
template <int kMantBits, int kBias>
constexpr uint32_t roundMagnitude(uint32_t absBits) {
  constexpr int kDroppedBits = 23 - kMantBits;
  // Float's biased exponent for the narrow format's smallest normal.
  constexpr uint32_t kMinNormalExp = 128 - kBias;
  const uint32_t exp = absBits >> 23;
  if (exp >= kMinNormalExp) {
    // Re-bias the exponent in place; the fraction's rounding carry then
    // ripples into the exponent field exactly as it should.
    const uint32_t rebiased = absBits - ((127u - kBias) << 23);
    const uint32_t keptLsb = (rebiased >> kDroppedBits) & 1u;
    return (rebiased + ((1u << (kDroppedBits - 1)) - 1u) + keptLsb) >>
           kDroppedBits;
  }
  // Subnormal result: count units of the smallest subnormal,
  // 2^(1 - kBias - kMantBits). shift is at least kDroppedBits + 1.
  const int shift = 151 - kBias - kMantBits - static_cast<int>(exp);
  if (shift > 24) return 0;  // below half the smallest subnormal
  const uint32_t significand = (absBits & 0x7fffffu) | 0x800000u;
  const uint32_t halfUnit = 1u << (shift - 1);
  const uint32_t remainder = significand & ((1u << shift) - 1u);
  uint32_t units = significand >> shift;
  if (remainder > halfUnit || (remainder == halfUnit && (units & 1u))) {
    ++units;  // may become the smallest normal, which is the right encoding
  }
  return units;
}

// Float bits of a finite narrow-format value given as its fields.
constexpr uint32_t finiteToFloatBits(uint32_t sign, uint32_t exp, uint32_t mant,
                                     int mantBits, int bias) {
  if (exp == 0 && mant == 0) return sign;
  int unbiased = 1 - bias;
  if (exp == 0) {
    while ((mant & (1u << mantBits)) == 0) {  // normalise a subnormal
      mant <<= 1;
      --unbiased;
    }
  } else {
    unbiased = static_cast<int>(exp) - bias;
  }
  const uint32_t fraction = mant & ((1u << mantBits) - 1u);
  return sign | (static_cast<uint32_t>(unbiased + 127) << 23) |
         (fraction << (23 - mantBits));
}

constexpr std::array<uint32_t, 256> makeE4m3Table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t v = 0; v < 256; ++v) {
    const uint32_t sign = (v & 0x80u) << 24;
    if ((v & 0x7fu) == 0x7fu) {
      table[v] = sign | kFloatInfBits | kFloatQuietBit;
    } else {
      table[v] = finiteToFloatBits(sign, (v >> 3) & 0xfu, v & 0x7u, 3, 7);
    }
  }
  return table;
}

constexpr std::array<uint32_t, 256> makeE5m2Table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t v = 0; v < 256; ++v) {
    const uint32_t sign = (v & 0x80u) << 24;
    const uint32_t exp = (v >> 2) & 0x1fu;
    const uint32_t mant = v & 0x3u;
    if (exp == 0x1f) {
      table[v] =
          sign | kFloatInfBits | (mant ? kFloatQuietBit : 0) | (mant << 21);
    } else {
      table[v] = finiteToFloatBits(sign, exp, mant, 2, 15);
    }
  }
  return table;
}

inline constexpr std::array<uint32_t, 256> kE4m3FloatBits = makeE4m3Table();
inline constexpr std::array<uint32_t, 256> kE5m2FloatBits = makeE5m2Table();

}  // namespace detail

// ---- IEEE half ----

inline float halfToFloat(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exp = (half >> 10) & 0x1fu;
  const uint32_t mant = half & 0x3ffu;
  if (exp == 0x1f) {  // infinity or NaN; a NaN comes out quiet
    return floatFromBits(sign | detail::kFloatInfBits | (mant << 13) |
                         (mant ? detail::kFloatQuietBit : 0));
  }
  if (exp != 0) return floatFromBits(sign | ((exp + 112) << 23) | (mant << 13));
  // Zero or subnormal: mant * 2^-24, exact in float.
  return floatFromBits(sign | floatBits(static_cast<float>(mant) * 0x1p-24f));
}

inline uint16_t floatToHalf(float value) {
  const uint32_t bits = floatBits(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t absBits = bits & detail::kFloatAbsMask;
  if (absBits > detail::kFloatInfBits) {  // NaN
    return static_cast<uint16_t>(sign | 0x7e00u | ((absBits >> 13) & 0x3ffu));
  }
  // 65536 and above (infinity too) overflow; between 65520 and 65536 the
  // rounding carry in roundMagnitude produces infinity on its own.
  if (absBits >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7c00u);
  return static_cast<uint16_t>(sign | detail::roundMagnitude<10, 15>(absBits));
}

// ---- bfloat16 ----

inline float bf16ToFloat(uint16_t bf16) {
  return floatFromBits(static_cast<uint32_t>(bf16) << 16);
}

// Written without branches so loops over it vectorize.
inline uint16_t floatToBf16(float value) {
  const uint32_t bits = floatBits(value);
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const uint32_t quietNan = (bits >> 16) | 0x40u;
  const bool isNan = (bits & detail::kFloatAbsMask) > detail::kFloatInfBits;
  return static_cast<uint16_t>(isNan ? quietNan : rounded);
}

// ---- OCP FP8 E4M3 ----

inline float e4m3ToFloat(uint8_t e4m3) {
  return floatFromBits(detail::kE4m3FloatBits[e4m3]);
}

inline uint8_t floatToE4m3(float value) {
  const uint32_t bits = floatBits(value);
  const uint32_t sign = (bits >> 24) & 0x80u;
  const uint32_t absBits = bits & detail::kFloatAbsMask;
  if (absBits > detail::kFloatInfBits)
    return static_cast<uint8_t>(sign | 0x7fu);
  if (absBits > 0x43e00000u) {  // above 448: saturate
    return static_cast<uint8_t>(sign | 0x7eu);
  }
  return static_cast<uint8_t>(sign | detail::roundMagnitude<3, 7>(absBits));
}

// ---- OCP FP8 E5M2 ----

inline float e5m2ToFloat(uint8_t e5m2) {
  return floatFromBits(detail::kE5m2FloatBits[e5m2]);
}

inline uint8_t floatToE5m2(float value) {
  const uint32_t bits = floatBits(value);
  const uint32_t sign = (bits >> 24) & 0x80u;
  const uint32_t absBits = bits & detail::kFloatAbsMask;
  if (absBits > detail::kFloatInfBits) {  // NaN: quiet bit plus one payload bit
    return static_cast<uint8_t>(sign | 0x7eu | ((absBits >> 21) & 1u));
  }
  // As for half: 65536 and up overflow here, 61440..65536 via the carry.
  if (absBits >= 0x47800000u) return static_cast<uint8_t>(sign | 0x7cu);
  return static_cast<uint8_t>(sign | detail::roundMagnitude<2, 15>(absBits));
}

// ---- Arrays of halves, with the CPU's conversion instructions ----

// F16C on x86-64 (chosen at run time), NEON FCVT on aarch64, else the scalar
// functions above. Results are bit-identical whichever path runs.
void halfToFloatArray(const uint16_t* src, float* dst, size_t count);
void floatToHalfArray(const float* src, uint16_t* dst, size_t count);

// Which path the two functions above take: "f16c", "neon" or "portable".
const char* halfConversionPath();

#if defined(__x86_64__)
// Whether the CPU and OS run AVX2 and F16C code (checked once). Code built
// with __attribute__((target("avx2,f16c"))) may run only when this is true.
bool cpuHasAvx2F16c();
#endif

}  // namespace mcl::kernels

#endif  // MCL_ALGORITHMS_KERNELS_FLOAT_CONVERT_H_
