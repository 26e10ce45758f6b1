// The PreMulSum pre-multiplication kernel (algorithms/kernels/scale.h):
// every type, against a plain reference, in place and out of place;
// integers wrap, narrow floats round once from float.
#include "algorithms/kernels/scale.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "algorithms/kernels/float_convert.h"

namespace mcl::kernels {
namespace {

template <typename T>
void expectNativeScaling(mclDataType_t type, T scalar) {
  std::vector<T> in;
  for (int i = -20; i < 20; ++i) in.push_back(static_cast<T>(i * 7 + 3));
  in.push_back(std::numeric_limits<T>::max());
  in.push_back(std::numeric_limits<T>::lowest());
  std::vector<T> out(in.size());
  scale(out.data(), in.data(), in.size(), type, &scalar);
  for (size_t i = 0; i < in.size(); ++i) {
    T want;
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      want = static_cast<T>(
          static_cast<U>(static_cast<U>(in[i]) * static_cast<U>(scalar)));
    } else {
      want = in[i] * scalar;
    }
    EXPECT_EQ(std::memcmp(&out[i], &want, sizeof(T)), 0)
        << "type " << type << " element " << i;
  }
  std::vector<T> inPlace = in;
  scale(inPlace.data(), inPlace.data(), inPlace.size(), type, &scalar);
  EXPECT_EQ(std::memcmp(inPlace.data(), out.data(), out.size() * sizeof(T)), 0);
}

TEST(ScaleKernel, NativeTypes) {
  expectNativeScaling<int8_t>(mclInt8, -3);
  expectNativeScaling<uint8_t>(mclUint8, 5);
  expectNativeScaling<int32_t>(mclInt32, -7);
  expectNativeScaling<uint32_t>(mclUint32, 3);
  expectNativeScaling<int64_t>(mclInt64, -11);
  expectNativeScaling<uint64_t>(mclUint64, 13);
  expectNativeScaling<float>(mclFloat32, 0.25f);
  expectNativeScaling<double>(mclFloat64, -1.0 / 3.0);
}

TEST(ScaleKernel, NarrowFloatsRoundOnceFromFloat) {
  const std::vector<float> values = {0.0f,       1.0f,   -2.5f,
                                     3.1415926f, 100.0f, -0.001f};
  const float s = 0.3f;
  std::vector<uint16_t> half, bf;
  std::vector<uint8_t> e4, e5;
  for (float v : values) {
    half.push_back(floatToHalf(v));
    bf.push_back(floatToBf16(v));
    e4.push_back(floatToE4m3(v));
    e5.push_back(floatToE5m2(v));
  }
  const uint16_t sHalf = floatToHalf(s), sBf = floatToBf16(s);
  const uint8_t sE4 = floatToE4m3(s), sE5 = floatToE5m2(s);
  std::vector<uint16_t> halfOut(half.size()), bfOut(bf.size());
  std::vector<uint8_t> e4Out(e4.size()), e5Out(e5.size());
  scale(halfOut.data(), half.data(), half.size(), mclFloat16, &sHalf);
  scale(bfOut.data(), bf.data(), bf.size(), mclBfloat16, &sBf);
  scale(e4Out.data(), e4.data(), e4.size(), mclFloat8e4m3, &sE4);
  scale(e5Out.data(), e5.data(), e5.size(), mclFloat8e5m2, &sE5);
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(halfOut[i],
              floatToHalf(halfToFloat(half[i]) * halfToFloat(sHalf)));
    EXPECT_EQ(bfOut[i], floatToBf16(bf16ToFloat(bf[i]) * bf16ToFloat(sBf)));
    EXPECT_EQ(e4Out[i], floatToE4m3(e4m3ToFloat(e4[i]) * e4m3ToFloat(sE4)));
    EXPECT_EQ(e5Out[i], floatToE5m2(e5m2ToFloat(e5[i]) * e5m2ToFloat(sE5)));
  }
}

TEST(ScaleKernel, EmptyAndInvalid) {
  float s = 2.0f;
  scale(nullptr, nullptr, 0, mclFloat32, &s);
  EXPECT_THROW(scale(&s, &s, 1, static_cast<mclDataType_t>(99), &s),
               std::invalid_argument);
}

}  // namespace
}  // namespace mcl::kernels
