// Sums of bfloat16 and half arrays with AVX-512 (x86-64 CPUs with
// AVX512-BF16: AMD Zen 4 and later, Intel Sapphire Rapids and later), the
// reduction of a tensor-parallel decode step. Bit for bit the portable
// loops' results. Other ops, and CPUs without these, use the AVX2 kernels.
#ifndef MCL_ALGORITHMS_KERNELS_HALF_SUM_AVX512_H_
#define MCL_ALGORITHMS_KERNELS_HALF_SUM_AVX512_H_

#include <cstddef>

namespace mcl::kernels {

#if defined(__x86_64__)
// Whether the CPU and OS run the kernels below (checked once).
bool cpuHasAvx512Bf16();

// dst[i] = a[i] + b[i]; dst may be a or b. Only when cpuHasAvx512Bf16().
void sumBf16Avx512(void* dst, const void* a, const void* b, size_t count);
void sumHalfAvx512(void* dst, const void* a, const void* b, size_t count);
#endif

}  // namespace mcl::kernels

#endif  // MCL_ALGORITHMS_KERNELS_HALF_SUM_AVX512_H_
