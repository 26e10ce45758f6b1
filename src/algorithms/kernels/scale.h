// Multiplying a buffer by a scalar: the "pre-multiply" of a PreMulSum
// reduction (mclRedOpCreatePreMulSum), applied to each rank's input before
// it is summed.
//
// Semantics, per type, matching reduce.h's: integers multiply modulo 2^bits;
// float and double natively; half, bfloat16 and fp8 in float, rounded once.
#pragma once

#include <mcl/mcl.h>

#include <cstddef>

namespace mcl::kernels {

// dst[i] = src[i] * scalar, where scalar points to one element of `type`.
// dst may be src; neither needs to be aligned to the element size.
void scale(void* dst, const void* src, size_t count, mclDataType_t type,
           const void* scalar);

}  // namespace mcl::kernels
