#include "common/float_conv.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace mcl::perf {

namespace {

// A small binary floating-point format: sign, expBits, manBits. With
// hasInf the all-ones exponent holds infinities and NaNs (IEEE style);
// without it (OCP e4m3) only all-ones exponent and mantissa is NaN and the
// other all-ones-exponent codes are ordinary numbers.
struct MiniFormat {
  int expBits;
  int manBits;
  int bias;
  bool hasInf;
};

constexpr MiniFormat kHalf{5, 10, 15, true};
constexpr MiniFormat kE5M2{5, 2, 15, true};
constexpr MiniFormat kE4M3{4, 3, 7, false};

// x >= 0, exactly representable as a double; rounds to nearest, ties even.
uint64_t roundHalfEven(double x) {
  double floor = std::floor(x);
  double fraction = x - floor;
  auto result = static_cast<uint64_t>(floor);
  if (fraction > 0.5 || (fraction == 0.5 && (result & 1) != 0)) ++result;
  return result;
}

uint32_t encode(float value, const MiniFormat& f) {
  const uint32_t signBit = 1u << (f.expBits + f.manBits);
  const uint32_t sign = std::signbit(value) ? signBit : 0;
  const uint32_t manMask = (1u << f.manBits) - 1;
  const uint32_t infCode = ((1u << f.expBits) - 1) << f.manBits;
  const uint32_t nanCode =
      f.hasInf ? infCode | (1u << (f.manBits - 1)) : infCode | manMask;
  const uint32_t maxCode = f.hasInf ? infCode - 1 : (infCode | manMask) - 1;
  const uint32_t overflowCode = f.hasInf ? infCode : maxCode;

  if (std::isnan(value)) return sign | nanCode;
  const double a = std::fabs(static_cast<double>(value));
  if (std::isinf(a)) return sign | overflowCode;

  // Codes of non-negative numbers grow with the value, and a mantissa that
  // rounds up to the next power of two carries into the exponent field:
  // that is the right next code, including into infinity.
  const int minExp = 1 - f.bias;
  uint64_t code;
  if (a < std::ldexp(1.0, minExp)) {
    code = roundHalfEven(std::ldexp(a, f.manBits - minExp));
  } else {
    int exp = 0;
    std::frexp(a, &exp);  // a = m * 2^exp, m in [0.5, 1)
    --exp;                // a in [2^exp, 2^(exp + 1))
    const uint64_t mantissa = roundHalfEven(std::ldexp(a, f.manBits - exp));
    code = (static_cast<uint64_t>(exp + f.bias) << f.manBits) + mantissa -
           (uint64_t{1} << f.manBits);
  }
  if (code > maxCode) code = overflowCode;
  return sign | static_cast<uint32_t>(code);
}

float decode(uint32_t code, const MiniFormat& f) {
  const uint32_t manMask = (1u << f.manBits) - 1;
  const uint32_t expMask = (1u << f.expBits) - 1;
  const bool negative = ((code >> (f.expBits + f.manBits)) & 1) != 0;
  const uint32_t exp = (code >> f.manBits) & expMask;
  const uint32_t man = code & manMask;
  double magnitude;
  if (exp == expMask && (f.hasInf || man == manMask)) {
    magnitude = (f.hasInf && man == 0)
                    ? std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::quiet_NaN();
  } else if (exp == 0) {
    magnitude = std::ldexp(static_cast<double>(man), 1 - f.bias - f.manBits);
  } else {
    magnitude = std::ldexp(static_cast<double>(man | (manMask + 1)),
                           static_cast<int>(exp) - f.bias - f.manBits);
  }
  return static_cast<float>(negative ? -magnitude : magnitude);
}

}  // namespace

uint16_t floatToHalf(float value) {
  return static_cast<uint16_t>(encode(value, kHalf));
}

float halfToFloat(uint16_t bits) { return decode(bits, kHalf); }

uint16_t floatToBfloat16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  // Round to nearest even on the 16 bits dropped; a carry out of the
  // mantissa bumps the exponent, up to infinity.
  bits += 0x7fffu + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

float bfloat16ToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

uint8_t floatToFp8e4m3(float value) {
  return static_cast<uint8_t>(encode(value, kE4M3));
}

float fp8e4m3ToFloat(uint8_t bits) { return decode(bits, kE4M3); }

uint8_t floatToFp8e5m2(float value) {
  return static_cast<uint8_t>(encode(value, kE5M2));
}

float fp8e5m2ToFloat(uint8_t bits) { return decode(bits, kE5M2); }

}  // namespace mcl::perf
