// Tests for the reduction kernels. Expectations come from a deliberately
// naive reference: narrow formats are decoded with std::ldexp from their
// fields and encoded by searching the sorted list of every finite value for
// the nearest one, so the bit tricks under test are checked against
// arithmetic, not against themselves.
#include <gtest/gtest.h>
#include <mcl/mcl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ios>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "algorithms/kernels/float_convert.h"
#include "algorithms/kernels/reduce.h"
#include "algorithms/kernels/types.h"

namespace mcl::kernels {
namespace {

// ---- Reference model of the narrow float formats ----

struct NarrowFormat {
  int expBits;
  int mantBits;
  int bias;
  bool hasInf;  // false: OCP E4M3, where only all-ones is NaN and it saturates
};

constexpr NarrowFormat kHalfFmt{5, 10, 15, true};
constexpr NarrowFormat kBf16Fmt{8, 7, 127, true};
constexpr NarrowFormat kE4m3Fmt{4, 3, 7, false};
constexpr NarrowFormat kE5m2Fmt{5, 2, 15, true};

uint32_t signBit(const NarrowFormat& f) {
  return 1u << (f.expBits + f.mantBits);
}
uint32_t expAllOnes(const NarrowFormat& f) { return (1u << f.expBits) - 1; }

bool refIsNan(const NarrowFormat& f, uint32_t bits) {
  const uint32_t magnitude = bits & (signBit(f) - 1);
  if (!f.hasInf) return magnitude == signBit(f) - 1;
  return (magnitude >> f.mantBits) == expAllOnes(f) &&
         (magnitude & ((1u << f.mantBits) - 1)) != 0;
}

double refDecode(const NarrowFormat& f, uint32_t bits) {
  if (refIsNan(f, bits)) return std::numeric_limits<double>::quiet_NaN();
  const double sign = (bits & signBit(f)) ? -1.0 : 1.0;
  const uint32_t exp = (bits >> f.mantBits) & expAllOnes(f);
  const uint32_t mant = bits & ((1u << f.mantBits) - 1);
  if (f.hasInf && exp == expAllOnes(f)) {
    return sign * std::numeric_limits<double>::infinity();
  }
  if (exp == 0) return sign * std::ldexp(mant, 1 - f.bias - f.mantBits);
  return sign * std::ldexp((1u << f.mantBits) + mant,
                           static_cast<int>(exp) - f.bias - f.mantBits);
}

uint32_t maxFiniteBits(const NarrowFormat& f) {
  return f.hasInf ? (expAllOnes(f) << f.mantBits) - 1 : signBit(f) - 2;
}

// Non-negative values in encoding order; for IEEE-like formats one more
// entry, 2^(emax+1), stands for infinity: IEEE rounds as if the exponent
// were unbounded and overflows whatever lands there.
const std::vector<double>& magnitudes(const NarrowFormat& f) {
  static std::map<const NarrowFormat*, std::vector<double>> cache;
  std::vector<double>& values = cache[&f];
  if (values.empty()) {
    for (uint32_t k = 0; k <= maxFiniteBits(f); ++k) {
      values.push_back(refDecode(f, k));
    }
    if (f.hasInf) {
      values.push_back(
          std::ldexp(1.0, static_cast<int>(expAllOnes(f)) - f.bias));
    }
  }
  return values;
}

uint32_t refEncode(const NarrowFormat& f, double x) {
  if (std::isnan(x)) return signBit(f) - 1;  // some NaN: only NaN-ness counts
  const uint32_t sign = std::signbit(x) ? signBit(f) : 0;
  const double magnitude = std::fabs(x);
  const std::vector<double>& values = magnitudes(f);
  const size_t above =
      std::upper_bound(values.begin(), values.end(), magnitude) -
      values.begin();
  size_t k = above - 1;  // values[k] <= magnitude (values[0] is 0)
  if (k + 1 < values.size()) {
    const double down = magnitude - values[k];
    const double up = values[k + 1] - magnitude;
    if (up < down || (up == down && (k & 1))) ++k;  // ties to even
  }
  return sign | static_cast<uint32_t>(k);  // E4M3 saturates: k <= 0x7e
}

// Every float that matters for rounding to f near each finite value:
// the value, the midpoint to the next one and the floats either side.
std::vector<float> roundingProbes(const NarrowFormat& f) {
  std::vector<float> probes;
  const std::vector<double>& values = magnitudes(f);
  for (size_t k = 0; k + 1 < values.size(); ++k) {
    const float mid = static_cast<float>((values[k] + values[k + 1]) / 2);
    for (float x : {static_cast<float>(values[k]), mid,
                    std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)}) {
      probes.push_back(x);
      probes.push_back(-x);
    }
  }
  std::mt19937 rng(42);
  for (int i = 0; i < 200000; ++i) probes.push_back(floatFromBits(rng()));
  for (float x : {std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::max(), 1e-45f, 1e9f}) {
    probes.push_back(x);
    probes.push_back(-x);
  }
  return probes;
}

// ---- Known values ----

TEST(FloatConvertTest, HalfKnownValues) {
  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(halfToFloat(0x03ff), 1023 * 0x1p-24f);
  EXPECT_EQ(halfToFloat(0x0400), 0x1p-14f);
  EXPECT_EQ(halfToFloat(0xc000), -2.0f);
  EXPECT_EQ(floatBits(halfToFloat(0x8000)), 0x80000000u);
  EXPECT_TRUE(std::isinf(halfToFloat(0x7c00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7c01)));
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.99f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);             // tie to even overflows
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3c00);      // tie, down to even
  EXPECT_EQ(floatToHalf(1.0f + 3 * 0x1p-11f), 0x3c02);  // tie, up to even
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000);             // tie to zero
  EXPECT_EQ(floatToHalf(std::nextafter(0x1p-25f, 1.0f)), 0x0001);
  EXPECT_EQ(floatToHalf(3 * 0x1p-25f), 0x0002);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(-1e30f), 0xfc00);
  EXPECT_EQ(floatToHalf(std::nanf("")) & 0x7fff, 0x7e00);
}

TEST(FloatConvertTest, Bf16KnownValues) {
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(floatToBf16(1.0f + 0x1p-8f), 0x3f80);      // tie, down to even
  EXPECT_EQ(floatToBf16(1.0f + 3 * 0x1p-8f), 0x3f82);  // tie, up to even
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(floatToBf16(floatFromBits(0x00008000)), 0x0000);
  EXPECT_EQ(floatToBf16(floatFromBits(0x00018000)), 0x0002);
  EXPECT_EQ(floatToBf16(-0.0f), 0x8000);
  const uint16_t nan = floatToBf16(floatFromBits(0x7f800001));  // signaling
  EXPECT_TRUE(std::isnan(bf16ToFloat(nan)));
}

TEST(FloatConvertTest, E4m3KnownValues) {
  EXPECT_EQ(e4m3ToFloat(0x7e), 448.0f);
  EXPECT_EQ(e4m3ToFloat(0x38), 1.0f);
  EXPECT_EQ(e4m3ToFloat(0x08), 0x1p-6f);
  EXPECT_EQ(e4m3ToFloat(0x01), 0x1p-9f);
  EXPECT_EQ(e4m3ToFloat(0x07), 7 * 0x1p-9f);
  EXPECT_EQ(e4m3ToFloat(0x77), 240.0f);
  EXPECT_EQ(e4m3ToFloat(0xfe), -448.0f);
  EXPECT_TRUE(std::isnan(e4m3ToFloat(0x7f)));
  EXPECT_TRUE(std::isnan(e4m3ToFloat(0xff)));
  EXPECT_EQ(floatToE4m3(448.0f), 0x7e);
  EXPECT_EQ(floatToE4m3(464.0f), 0x7e);  // saturates, never NaN
  EXPECT_EQ(floatToE4m3(500.0f), 0x7e);
  EXPECT_EQ(floatToE4m3(1e30f), 0x7e);
  EXPECT_EQ(floatToE4m3(std::numeric_limits<float>::infinity()), 0x7e);
  EXPECT_EQ(floatToE4m3(-std::numeric_limits<float>::infinity()), 0xfe);
  EXPECT_EQ(floatToE4m3(std::nanf("")) & 0x7f, 0x7f);
  EXPECT_EQ(floatToE4m3(0x1p-10f), 0x00);  // tie to zero
  EXPECT_EQ(floatToE4m3(3 * 0x1p-10f), 0x02);
  EXPECT_EQ(floatToE4m3(-0.0f), 0x80);
}

TEST(FloatConvertTest, E5m2KnownValues) {
  EXPECT_EQ(e5m2ToFloat(0x7b), 57344.0f);
  EXPECT_EQ(e5m2ToFloat(0x3c), 1.0f);
  EXPECT_EQ(e5m2ToFloat(0x01), 0x1p-16f);
  EXPECT_EQ(e5m2ToFloat(0x04), 0x1p-14f);
  EXPECT_TRUE(std::isinf(e5m2ToFloat(0x7c)));
  EXPECT_TRUE(std::isnan(e5m2ToFloat(0x7d)));
  EXPECT_EQ(floatToE5m2(57344.0f), 0x7b);
  EXPECT_EQ(floatToE5m2(61439.0f), 0x7b);
  EXPECT_EQ(floatToE5m2(61440.0f), 0x7c);  // tie to even overflows
  EXPECT_EQ(floatToE5m2(-1e30f), 0xfc);
  EXPECT_EQ(floatToE5m2(0x1p-17f), 0x00);
  EXPECT_EQ(floatToE5m2(3 * 0x1p-17f), 0x02);
}

// ---- Every encoding, and rounding against the reference ----

template <typename Bits>
void checkAllPatterns(const NarrowFormat& f, uint32_t patterns,
                      float (*decode)(Bits), Bits (*encode)(float)) {
  for (uint32_t bits = 0; bits < patterns; ++bits) {
    const float value = decode(static_cast<Bits>(bits));
    if (refIsNan(f, bits)) {
      EXPECT_TRUE(std::isnan(value)) << std::hex << bits;
      EXPECT_TRUE(refIsNan(f, encode(value))) << std::hex << bits;
      continue;
    }
    EXPECT_EQ(static_cast<double>(value), refDecode(f, bits))
        << std::hex << bits;
    EXPECT_EQ(encode(value), bits) << std::hex << bits;
  }
}

template <typename Bits>
void checkRounding(const NarrowFormat& f, Bits (*encode)(float)) {
  for (float x : roundingProbes(f)) {
    const uint32_t expected = refEncode(f, x);
    const uint32_t actual = encode(x);
    if (std::isnan(x)) {
      EXPECT_TRUE(refIsNan(f, actual)) << std::hex << floatBits(x);
    } else {
      ASSERT_EQ(actual, expected) << std::hex << "float bits " << floatBits(x);
    }
  }
}

TEST(FloatConvertTest, HalfAllPatternsAndRounding) {
  checkAllPatterns<uint16_t>(kHalfFmt, 65536, halfToFloat, floatToHalf);
  checkRounding<uint16_t>(kHalfFmt, floatToHalf);
}

TEST(FloatConvertTest, Bf16AllPatternsAndRounding) {
  checkAllPatterns<uint16_t>(kBf16Fmt, 65536, bf16ToFloat, floatToBf16);
  checkRounding<uint16_t>(kBf16Fmt, floatToBf16);
}

TEST(FloatConvertTest, E4m3AllPatternsAndRounding) {
  checkAllPatterns<uint8_t>(kE4m3Fmt, 256, e4m3ToFloat, floatToE4m3);
  checkRounding<uint8_t>(kE4m3Fmt, floatToE4m3);
}

TEST(FloatConvertTest, E5m2AllPatternsAndRounding) {
  checkAllPatterns<uint8_t>(kE5m2Fmt, 256, e5m2ToFloat, floatToE5m2);
  checkRounding<uint8_t>(kE5m2Fmt, floatToE5m2);
}

// The F16C / NEON path must agree with the scalar code bit for bit, NaN
// payloads included, at every length (the tails are scalar).
TEST(FloatConvertTest, FastHalfPathMatchesScalar) {
  std::printf("half conversion: %s, kernels: %s\n", halfConversionPath(),
              kernelPath());
  std::vector<uint16_t> halves(65536 + 5);
  for (size_t i = 0; i < halves.size(); ++i) halves[i] = uint16_t(i * 7919);
  std::vector<float> floats(halves.size());
  halfToFloatArray(halves.data(), floats.data(), halves.size());
  for (size_t i = 0; i < halves.size(); ++i) {
    ASSERT_EQ(floatBits(floats[i]), floatBits(halfToFloat(halves[i]))) << i;
  }
  std::vector<float> probes = roundingProbes(kHalfFmt);
  std::mt19937 rng(7);
  for (int i = 0; i < 1000; ++i)
    probes.push_back(floatFromBits(rng() | 0x7f800001u));
  std::vector<uint16_t> narrowed(probes.size());
  floatToHalfArray(probes.data(), narrowed.data(), probes.size());
  for (size_t i = 0; i < probes.size(); ++i) {
    ASSERT_EQ(narrowed[i], floatToHalf(probes[i]))
        << std::hex << floatBits(probes[i]);
  }
}

// ---- reduce() against the reference ----

const NarrowFormat* narrowFormat(mclDataType_t type) {
  switch (type) {
    case mclFloat16:
      return &kHalfFmt;
    case mclBfloat16:
      return &kBf16Fmt;
    case mclFloat8e4m3:
      return &kE4m3Fmt;
    case mclFloat8e5m2:
      return &kE5m2Fmt;
    default:
      return nullptr;
  }
}

// Calls f(T{}) with the C++ type of a type that is not a narrow float.
template <typename F>
auto visitNative(mclDataType_t type, F f) {
  switch (type) {
    case mclInt8:
      return f(int8_t{});
    case mclUint8:
      return f(uint8_t{});
    case mclInt32:
      return f(int32_t{});
    case mclUint32:
      return f(uint32_t{});
    case mclInt64:
      return f(int64_t{});
    case mclUint64:
      return f(uint64_t{});
    case mclFloat32:
      return f(float{});
    default:
      return f(double{});
  }
}

uint64_t loadElement(const uint8_t* p, size_t size) {
  uint64_t v = 0;
  std::memcpy(&v, p, size);  // little-endian hosts only, as mcl is
  return v;
}

template <typename T>
T as(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}

template <typename T>
uint64_t bitsOf(T v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}

// Stands for "any NaN" among expected elements.
constexpr uint64_t kAnyNan = ~uint64_t{0};

// The expected bits of compute(a, b), done the way the kernels promise:
// narrow formats decode to float, compute in float and round once; other
// types compute in their own type.
template <typename Compute>
uint64_t expectElement(mclDataType_t type, uint64_t a, uint64_t b,
                       Compute compute) {
  if (const NarrowFormat* f = narrowFormat(type)) {
    const float r = compute(static_cast<float>(refDecode(*f, a)),
                            static_cast<float>(refDecode(*f, b)));
    return std::isnan(r) ? kAnyNan : refEncode(*f, r);
  }
  return visitNative(type, [&](auto zero) -> uint64_t {
    using T = decltype(zero);
    const T r = compute(as<T>(a), as<T>(b));
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(r)) return kAnyNan;
    }
    return bitsOf(r);
  });
}

// Integers compute exactly in 64 bits and wrap on conversion back
// (modular since C++20). Floats: NaN wins max/min; ties keep a.
template <typename T>
T refOp(T a, T b, mclRedOp_t op) {
  if constexpr (std::is_integral_v<T>) {
    const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
    if (op == mclProd) return static_cast<T>(x * y);
    if (op == mclSum || op == mclAvg) return static_cast<T>(x + y);
  } else if (op == mclMax || op == mclMin) {
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<T>::quiet_NaN();
  } else {
    return op == mclProd ? a * b : a + b;
  }
  if (op == mclMax) return b > a ? b : a;
  return b < a ? b : a;
}

bool isNanElement(mclDataType_t type, uint64_t bits) {
  if (const NarrowFormat* f = narrowFormat(type)) return refIsNan(*f, bits);
  return visitNative(type, [bits](auto zero) {
    if constexpr (std::is_floating_point_v<decltype(zero)>) {
      return std::isnan(as<decltype(zero)>(bits));
    }
    return false;
  });
}

// Random elements: any bits for integers and narrow floats (NaN and inf
// included); for float and double mostly ordinary values plus specials.
void fillRandom(uint8_t* p, size_t count, mclDataType_t type,
                std::mt19937_64& rng) {
  const size_t size = typeSize(type);
  std::uniform_real_distribution<double> ordinary(-1000.0, 1000.0);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double specials[] = {0.0,    -0.0,   1.0,  -1.0,
                             1e-310, 3.4e38, kInf, std::nan("")};
  for (size_t i = 0; i < count; ++i) {
    uint64_t bits = rng();
    if (type == mclFloat32 || type == mclFloat64) {
      const double v =
          (bits % 10 == 0) ? specials[(bits >> 8) % 8] : ordinary(rng);
      bits = type == mclFloat32 ? bitsOf(static_cast<float>(v)) : bitsOf(v);
    }
    std::memcpy(p + i * size, &bits, size);
  }
}

enum class Aliasing { kNone, kDstIsA, kDstIsB, kAll };

// Runs a test body on the CPU's best kernels, on AVX2 where AVX-512 would
// run, then on the portable ones (a path the CPU lacks runs once).
template <typename Body>
void onEveryKernelPath(Body body) {
  std::string last;
  for (int pass = 0; pass < 3; ++pass) {
    avoidAvx512Kernels(pass >= 1);
    forcePortableKernels(pass == 2);
    if (kernelPath() == last) continue;
    last = kernelPath();
    SCOPED_TRACE(kernelPath());
    body();
  }
  avoidAvx512Kernels(false);
  forcePortableKernels(false);
}

// A buffer with room for a one-element offset and guard elements after it,
// 64-byte aligned at offset 0.
struct TestBuffer {
  std::vector<uint8_t> storage;
  uint8_t* data;
  TestBuffer(size_t count, size_t size, bool misaligned)
      : storage((count + 4) * size + 64, 0xA5) {
    uint8_t* base = storage.data();
    base += (64 - reinterpret_cast<uintptr_t>(base) % 64) % 64;
    data = base + (misaligned ? size : 0);
  }
};

void checkReduce(mclDataType_t type, mclRedOp_t op, size_t count,
                 bool misaligned, Aliasing aliasing) {
  const size_t size = typeSize(type);
  std::mt19937_64 rng(count * 131 + type * 7 + op);
  TestBuffer bufA(count, size, misaligned), bufB(count, size, misaligned),
      bufDst(count, size, misaligned);
  fillRandom(bufA.data, count, type, rng);
  fillRandom(bufB.data, count, type, rng);
  uint8_t* a = bufA.data;
  uint8_t* b = aliasing == Aliasing::kAll ? a : bufB.data;
  std::vector<uint64_t> expected(count);
  for (size_t i = 0; i < count; ++i) {
    expected[i] = expectElement(
        type, loadElement(a + i * size, size), loadElement(b + i * size, size),
        [op](auto x, auto y) { return refOp(x, y, op); });
  }
  uint8_t* dst = aliasing == Aliasing::kNone     ? bufDst.data
                 : aliasing == Aliasing::kDstIsB ? b
                                                 : a;
  reduce(dst, a, b, count, type, op);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t actual = loadElement(dst + i * size, size);
    if (expected[i] == kAnyNan) {
      ASSERT_TRUE(isNanElement(type, actual)) << "element " << i;
    } else {
      ASSERT_EQ(actual, expected[i]) << "element " << i << " of " << count;
    }
  }
  for (size_t i = 0; i < size; ++i) {
    ASSERT_EQ(dst[count * size + i], 0xA5) << "wrote past the end";
  }
}

std::vector<mclDataType_t> allTypes() {
  std::vector<mclDataType_t> types;
  for (int t = 0; t < mclNumTypes; ++t) {
    types.push_back(static_cast<mclDataType_t>(t));
  }
  return types;
}

class ReduceTest
    : public ::testing::TestWithParam<std::tuple<mclDataType_t, mclRedOp_t>> {};

TEST_P(ReduceTest, MatchesReference) {
  const auto type = std::get<0>(GetParam());
  const auto op = std::get<1>(GetParam());
  onEveryKernelPath([type, op] {
    for (size_t count : {0, 1, 7, 1000, 4099}) {
      for (bool misaligned : {false, true}) {
        for (Aliasing aliasing : {Aliasing::kNone, Aliasing::kDstIsA,
                                  Aliasing::kDstIsB, Aliasing::kAll}) {
          SCOPED_TRACE(testing::Message()
                       << "count " << count << " misaligned " << misaligned
                       << " aliasing " << static_cast<int>(aliasing));
          checkReduce(type, op, count, misaligned, aliasing);
        }
      }
    }
  });
}

std::string reduceTestName(
    const ::testing::TestParamInfo<ReduceTest::ParamType>& test) {
  return std::string(typeName(std::get<0>(test.param))) + "_" +
         opName(std::get<1>(test.param));
}

INSTANTIATE_TEST_SUITE_P(AllTypesAndOps, ReduceTest,
                         ::testing::Combine(::testing::ValuesIn(allTypes()),
                                            ::testing::Values(mclSum, mclProd,
                                                              mclMax, mclMin,
                                                              mclAvg)),
                         reduceTestName);

// ---- Explicit cases ----

template <typename T>
T reduceOne(T a, T b, mclDataType_t type, mclRedOp_t op) {
  T out;
  reduce(&out, &a, &b, 1, type, op);
  return out;
}

TEST(ReduceSemanticsTest, IntegersWrapAround) {
  EXPECT_EQ(reduceOne<int8_t>(100, 100, mclInt8, mclSum), -56);
  EXPECT_EQ(reduceOne<int8_t>(16, 16, mclInt8, mclProd), 0);
  EXPECT_EQ(reduceOne<int8_t>(-128, -1, mclInt8, mclProd), -128);
  EXPECT_EQ(reduceOne<uint8_t>(200, 100, mclUint8, mclSum), 44);
  EXPECT_EQ(reduceOne<int32_t>(INT32_MAX, 1, mclInt32, mclSum), INT32_MIN);
  EXPECT_EQ(reduceOne<uint32_t>(UINT32_MAX, 2, mclUint32, mclAvg), 1u);
  EXPECT_EQ(reduceOne<int64_t>(INT64_MAX, 1, mclInt64, mclSum), INT64_MIN);
  EXPECT_EQ(reduceOne<int64_t>(INT64_MIN, -1, mclInt64, mclProd), INT64_MIN);
  EXPECT_EQ(reduceOne<uint64_t>(1ull << 32, 1ull << 32, mclUint64, mclProd),
            0u);
}

TEST(ReduceSemanticsTest, NanWinsMaxAndMin) {
  const float nanF = std::numeric_limits<float>::quiet_NaN();
  const double nanD = std::numeric_limits<double>::quiet_NaN();
  for (mclRedOp_t op : {mclMax, mclMin}) {
    EXPECT_TRUE(std::isnan(reduceOne(nanF, 1.0f, mclFloat32, op)));
    EXPECT_TRUE(std::isnan(reduceOne(1.0f, nanF, mclFloat32, op)));
    EXPECT_TRUE(std::isnan(reduceOne(nanD, -1.0, mclFloat64, op)));
    EXPECT_TRUE(std::isnan(reduceOne(-1.0, nanD, mclFloat64, op)));
    const uint16_t half1 = 0x3c00, halfNan = 0x7e00;
    EXPECT_TRUE(refIsNan(kHalfFmt, reduceOne(half1, halfNan, mclHalf, op)));
    EXPECT_TRUE(refIsNan(kHalfFmt, reduceOne(halfNan, half1, mclHalf, op)));
    const uint16_t bf1 = 0x3f80, bfNan = 0x7fc0;
    EXPECT_TRUE(refIsNan(kBf16Fmt, reduceOne(bf1, bfNan, mclBfloat16, op)));
    const uint8_t e4One = 0x38, e4Nan = 0x7f;
    EXPECT_EQ(reduceOne(e4One, e4Nan, mclFloat8e4m3, op) & 0x7f, 0x7f);
    const uint8_t e5One = 0x3c, e5Nan = 0x7e;
    EXPECT_TRUE(refIsNan(kE5m2Fmt, reduceOne(e5Nan, e5One, mclFloat8e5m2, op)));
  }
  // Equal inputs give a: max(+0, -0) is +0 and max(-0, +0) is -0.
  EXPECT_FALSE(std::signbit(reduceOne(0.0f, -0.0f, mclFloat32, mclMax)));
  EXPECT_TRUE(std::signbit(reduceOne(-0.0f, 0.0f, mclFloat32, mclMax)));
}

TEST(ReduceSemanticsTest, NarrowFloatsRoundOnceFromFloat) {
  const uint8_t e4Max = 0x7e, e4NegMax = 0xfe;
  EXPECT_EQ(reduceOne(e4Max, e4Max, mclFloat8e4m3, mclSum), e4Max);
  EXPECT_EQ(reduceOne(e4NegMax, e4NegMax, mclFloat8e4m3, mclSum), e4NegMax);
  const uint8_t e5Max = 0x7b;
  EXPECT_EQ(reduceOne(e5Max, e5Max, mclFloat8e5m2, mclSum), 0x7c);  // inf
  // 2048 + 1 is not a half; 2049 is a tie and rounds to even, 2048.
  const uint16_t h2048 = 0x6800, h1 = 0x3c00;
  EXPECT_EQ(reduceOne(h2048, h1, mclHalf, mclSum), h2048);
  const uint16_t hMax = 0x7bff;
  EXPECT_EQ(reduceOne(hMax, hMax, mclHalf, mclSum), 0x7c00);
}

// Sums the vector kernels round differently than the scalar code unless
// they step aside: subnormal results (AVX-512's bf16 conversion flushes
// them), NaN results, overflow to infinity and ties, at lengths past every
// kernel's group. Each 16-bit pattern pair below is summed by reduce() and
// compared with the scalar conversion functions (tested bit for bit above).
TEST(ReduceSemanticsTest, HalfAndBf16SumsOfEdgeValuesOnEveryPath) {
  std::mt19937_64 rng(7);
  struct Case {
    mclDataType_t type;
    uint16_t (*pick)(std::mt19937_64&);
  };
  const Case cases[] = {
      // bf16 subnormals (exponent 0) of either sign: subnormal sums.
      {mclBfloat16, [](std::mt19937_64& r) { return uint16_t(r() & 0x807f); }},
      // bf16 near the largest finite: sums overflow, or round to a tie.
      {mclBfloat16,
       [](std::mt19937_64& r) { return uint16_t(0x7f70 | (r() & 0x800f)); }},
      // A NaN now and then among ordinary values.
      {mclBfloat16,
       [](std::mt19937_64& r) {
         return r() % 29 == 0 ? uint16_t(0x7fc1) : uint16_t(r() & 0xbfff);
       }},
      {mclHalf, [](std::mt19937_64& r) { return uint16_t(r() & 0x83ff); }},
      {mclHalf,
       [](std::mt19937_64& r) { return uint16_t(0x7bf0 | (r() & 0x800f)); }},
  };
  onEveryKernelPath([&] {
    for (const Case& c : cases) {
      const size_t count = 77;
      std::vector<uint16_t> a(count), b(count), sum(count);
      for (size_t i = 0; i < count; ++i) {
        a[i] = c.pick(rng);
        b[i] = c.pick(rng);
      }
      reduce(sum.data(), a.data(), b.data(), count, c.type, mclSum);
      for (size_t i = 0; i < count; ++i) {
        const bool bf16 = c.type == mclBfloat16;
        const uint16_t want =
            bf16 ? floatToBf16(bf16ToFloat(a[i]) + bf16ToFloat(b[i]))
                 : floatToHalf(halfToFloat(a[i]) + halfToFloat(b[i]));
        ASSERT_EQ(sum[i], want)
            << typeName(c.type) << " " << std::hex << a[i] << " + " << b[i]
            << " (element " << std::dec << i << ")";
      }
    }
  });
}

// ---- divide() ----

TEST(DivideTest, KnownQuotients) {
  std::vector<int8_t> i8 = {-128, -7, 7, 127};
  divide(i8.data(), i8.size(), mclInt8, 2);  // truncates toward zero
  EXPECT_EQ(i8, (std::vector<int8_t>{-64, -3, 3, 63}));
  std::vector<uint8_t> u8 = {255, 7};
  divide(u8.data(), u8.size(), mclUint8, 200);  // divisor above int8 range
  EXPECT_EQ(u8, (std::vector<uint8_t>{1, 0}));
  std::vector<uint16_t> half = {0x3c00};
  divide(half.data(), half.size(), mclHalf, 3);
  EXPECT_EQ(half[0], 0x3555);  // 1/3 rounded to nearest
}

// Integers divide exactly in 64 bits (truncating), floats natively.
template <typename T>
T refDivide(T x, int divisor) {
  if constexpr (std::is_same_v<T, uint64_t>) {
    return x / static_cast<uint64_t>(divisor);
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<int64_t>(x) / divisor);
  } else {
    return x / static_cast<T>(divisor);
  }
}

void checkDivideEveryType() {
  std::mt19937_64 rng(99);
  for (int t = 0; t < mclNumTypes; ++t) {
    const auto type = static_cast<mclDataType_t>(t);
    const size_t size = typeSize(type), count = 1029;
    for (int divisor : {1, 2, 3, 7, 200}) {
      std::vector<uint8_t> buf(count * size);
      fillRandom(buf.data(), count, type, rng);
      const std::vector<uint8_t> original = buf;
      divide(buf.data(), count, type, divisor);
      for (size_t i = 0; i < count; ++i) {
        const uint64_t in = loadElement(&original[i * size], size);
        const uint64_t out = loadElement(&buf[i * size], size);
        const uint64_t expected = expectElement(
            type, in, in,
            [divisor](auto x, auto) { return refDivide(x, divisor); });
        if (expected == kAnyNan) {
          ASSERT_TRUE(isNanElement(type, out)) << typeName(type) << " " << i;
        } else {
          ASSERT_EQ(out, expected)
              << typeName(type) << " / " << divisor << " element " << i;
        }
      }
    }
  }
}

TEST(DivideTest, EveryTypeMatchesReference) {
  onEveryKernelPath(checkDivideEveryType);
}

// ---- copy(), argument checks, names ----

TEST(KernelsTest, CopyAndEmptyCalls) {
  const char src[] = "collective";
  char dst[sizeof(src)] = {};
  copy(dst, src, sizeof(src));
  EXPECT_STREQ(dst, src);
  copy(nullptr, nullptr, 0);
  reduce(nullptr, nullptr, nullptr, 0, mclFloat32, mclSum);
  divide(nullptr, 0, mclHalf, 4);
}

TEST(KernelsTest, InvalidArgumentsThrow) {
  float x = 1;
  EXPECT_THROW(reduce(&x, &x, &x, 1, mclNumTypes, mclSum),
               std::invalid_argument);
  EXPECT_THROW(reduce(&x, &x, &x, 1, mclFloat32, mclNumOps),
               std::invalid_argument);
  EXPECT_THROW(divide(&x, 1, mclFloat32, 0), std::invalid_argument);
}

TEST(TypesTest, SizesAndValidity) {
  const size_t sizes[mclNumTypes] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  for (int t = 0; t < mclNumTypes; ++t) {
    EXPECT_EQ(typeSize(static_cast<mclDataType_t>(t)), sizes[t]) << t;
    EXPECT_TRUE(isValidType(t));
  }
  EXPECT_EQ(typeSize(mclNumTypes), 0u);
  EXPECT_FALSE(isValidType(-1));
  EXPECT_FALSE(isValidType(mclNumTypes));
  EXPECT_TRUE(isValidOp(mclAvg));
  EXPECT_FALSE(isValidOp(mclNumOps));
  EXPECT_FALSE(isValidOp(-1));
}

TEST(TypesTest, NamesRoundTripAndAliases) {
  const char* names[mclNumTypes] = {"int8",   "uint8",    "int32",  "uint32",
                                    "int64",  "uint64",   "half",   "float",
                                    "double", "bfloat16", "f8e4m3", "f8e5m2"};
  for (int t = 0; t < mclNumTypes; ++t) {
    const auto type = static_cast<mclDataType_t>(t);
    EXPECT_STREQ(typeName(type), names[t]);
    mclDataType_t parsed = mclNumTypes;
    EXPECT_TRUE(parseTypeName(names[t], &parsed));
    EXPECT_EQ(parsed, type);
  }
  const std::pair<const char*, mclDataType_t> aliases[] = {
      {"float32", mclFloat32}, {"FP32", mclFloat32},   {"float16", mclHalf},
      {"fp16", mclHalf},       {"BF16", mclBfloat16},  {"int", mclInt32},
      {"char", mclInt8},       {"float64", mclDouble}, {"e4m3", mclFloat8e4m3},
      {"E5M2", mclFloat8e5m2}, {"Half", mclHalf}};
  for (const auto& [name, type] : aliases) {
    mclDataType_t parsed = mclNumTypes;
    EXPECT_TRUE(parseTypeName(name, &parsed)) << name;
    EXPECT_EQ(parsed, type) << name;
  }
  mclDataType_t untouched = mclInt8;
  EXPECT_FALSE(parseTypeName("float128", &untouched));
  EXPECT_FALSE(parseTypeName("", &untouched));
  EXPECT_EQ(untouched, mclInt8);
  EXPECT_STREQ(typeName(static_cast<mclDataType_t>(15)), "unknown");

  const char* ops[mclNumOps] = {"sum", "prod", "max", "min", "avg"};
  for (int o = 0; o < mclNumOps; ++o) {
    EXPECT_STREQ(opName(static_cast<mclRedOp_t>(o)), ops[o]);
    mclRedOp_t parsed = mclNumOps;
    EXPECT_TRUE(parseOpName(ops[o], &parsed));
    EXPECT_EQ(parsed, o);
  }
  mclRedOp_t op = mclSum;
  EXPECT_TRUE(parseOpName("MAX", &op));
  EXPECT_EQ(op, mclMax);
  EXPECT_FALSE(parseOpName("xor", &op));
  EXPECT_EQ(op, mclMax);
  EXPECT_STREQ(opName(mclNumOps), "unknown");
}

}  // namespace
}  // namespace mcl::kernels
