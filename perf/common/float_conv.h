// fp32 <-> half, bfloat16 and the two OCP fp8 formats, as bit patterns.
// Conversions from fp32 round to nearest, ties to even; NaN stays NaN.
// Overflow gives infinity for half, bfloat16 and e5m2, and saturates at
// +-448 for e4m3 (which has no infinities), as mcl.h describes.
#pragma once

#include <cstdint>

namespace mcl::perf {

uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);

uint16_t floatToBfloat16(float value);
float bfloat16ToFloat(uint16_t bits);

uint8_t floatToFp8e4m3(float value);
float fp8e4m3ToFloat(uint8_t bits);

uint8_t floatToFp8e5m2(float value);
float fp8e5m2ToFloat(uint8_t bits);

}  // namespace mcl::perf
