// Element-wise reduction kernels: the arithmetic inside every reducing
// collective (all-reduce, reduce, reduce-scatter).
//
// Semantics, for every mclDataType_t and mclRedOp_t:
//  - Integers: sum and prod wrap around modulo 2^bits; max and min compare.
//  - float, double: native IEEE arithmetic.
//  - half, bfloat16, fp8: both inputs are widened to float, combined in float,
//    and the result rounded once back (nearest even; E4M3 saturates at +-448,
//    see float_convert.h).
//  - max/min of floating types: if either input is NaN the result is NaN
//    (unlike fmax, which drops NaNs: a NaN in a gradient must not vanish).
//    When the inputs compare equal (+0 and -0) the result is a. NaN payloads
//    are not specified.
//  - mclAvg reduces like mclSum; divide() is its final step.
// Buffers must be aligned to the element size. Invalid types or ops throw
// std::invalid_argument (callers validate with isValidType/isValidOp first).
#ifndef MCL_ALGORITHMS_KERNELS_REDUCE_H_
#define MCL_ALGORITHMS_KERNELS_REDUCE_H_

#include <mcl/mcl.h>

#include <cstddef>

namespace mcl::kernels {

// dst[i] = a[i] op b[i] for i < count. dst may be the same pointer as a
// and/or b (in-place); it must not partially overlap either.
void reduce(void* dst, const void* a, const void* b, size_t count,
            mclDataType_t type, mclRedOp_t op);

// buf[i] /= divisor (divisor >= 1), mclAvg's last step. Integers truncate
// toward zero; float and double divide natively; half, bfloat16 and fp8
// divide in float and round once.
void divide(void* buf, size_t count, mclDataType_t type, int divisor);

// memcpy that accepts bytes == 0 with null pointers.
void copy(void* dst, const void* src, size_t bytes);

// The loops reduce() and divide() run for half and bfloat16: "avx512"
// (x86-64 with AVX512-BF16: the sums; other ops as "avx2"), "avx2" (x86-64
// with AVX2 and F16C), both chosen at run time, "neon" (AArch64) or
// "portable".
const char* kernelPath();

// true makes every later call, process-wide, take the portable loops; false
// restores the CPU's best path. Results are bit-identical either way: this
// exists so tests and benchmarks can check and compare both.
void forcePortableKernels(bool portable);

// true makes later calls, process-wide, use the AVX2 kernels where the
// AVX-512 ones would run (nothing changes elsewhere); false restores them.
// For tests and benchmarks, as forcePortableKernels.
void avoidAvx512Kernels(bool avoid);

}  // namespace mcl::kernels

#endif  // MCL_ALGORITHMS_KERNELS_REDUCE_H_
