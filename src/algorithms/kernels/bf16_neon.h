// bfloat16 reductions with NEON on AArch64 (every Apple silicon Mac): the
// same even/odd lane trick as the AVX2 kernel, in integer and float32
// instructions every AArch64 CPU has (no FEAT_BF16, which M1 lacks). Bit
// for bit the portable loops' results.
#ifndef MCL_ALGORITHMS_KERNELS_BF16_NEON_H_
#define MCL_ALGORITHMS_KERNELS_BF16_NEON_H_

#include <cstddef>

namespace mcl::kernels {

#if defined(__aarch64__)
enum class Bf16NeonOp { kSum, kProd, kMax, kMin };

// dst[i] = a[i] op b[i]; dst may be a or b.
void combineBf16Neon(Bf16NeonOp op, void* dst, const void* a, const void* b,
                     size_t count);
#endif

}  // namespace mcl::kernels

#endif  // MCL_ALGORITHMS_KERNELS_BF16_NEON_H_
