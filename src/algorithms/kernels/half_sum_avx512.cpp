#include "algorithms/kernels/half_sum_avx512.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "algorithms/kernels/float_convert.h"

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_epi32(), which
// -Wmaybe-uninitialized then reports inside them.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace mcl::kernels {

#define MCL_AVX512_ISA "avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,f16c"
#define MCL_AVX512 __attribute__((target(MCL_AVX512_ISA)))

bool cpuHasAvx512Bf16() {
  static const bool supported = [] {
    // __builtin_cpu_supports also checks that the OS saves zmm registers.
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") == 0 ||
        __builtin_cpu_supports("avx512bw") == 0 ||
        __builtin_cpu_supports("avx512dq") == 0 ||
        __builtin_cpu_supports("avx512vl") == 0)
      return false;
    // AVX512_BF16: CPUID leaf 7, sub-leaf 1, EAX bit 5 (read directly:
    // older compilers do not name it).
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) == 0) return false;
    if ((eax & (1u << 5)) == 0) return false;
    // F16C (leaf 1, ECX bit 29), for the half-precision sum's ymm converts:
    // every AVX-512 CPU has it, but the kernel must not assume so.
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
    return (ecx & (1u << 29)) != 0;
  }();
  return supported;
}

namespace {

// 16 bfloat16 elements as floats: widened to 32 bits, moved to the top.
// NaN, signalling or quiet, and subnormal lanes: the portable rounding
// keeps subnormals, where VCVTNE2PS2BF16 flushes them to zero.
constexpr int kNanOrSubnormal = 0x01 | 0x20 | 0x80;

}  // namespace

MCL_AVX512 void sumBf16Avx512(void* dstRaw, const void* aRaw, const void* bRaw,
                              size_t count) {
  constexpr size_t kGroup = 32;
  auto* dst = static_cast<uint16_t*>(dstRaw);
  const auto* a = static_cast<const uint16_t*>(aRaw);
  const auto* b = static_cast<const uint16_t*>(bRaw);
  auto scalar = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i)
      dst[i] = floatToBf16(bf16ToFloat(a[i]) + bf16ToFloat(b[i]));
  };
  // A bf16 is the top half of a float: in each 32-bit lane of 32 loaded
  // values, the odd element masked and the even one shifted up are floats
  // already. Widening by zero-extension instead took four shuffles per 32
  // values, and the shuffle unit was the loop's limit (24 against 29 GB/s
  // in cache on this VM's Zen 4). VCVTNE2PS2BF16 then packs the even sums
  // into the low half and the odd ones into the high half; one permute puts
  // them back in order.
  const __m512i oddBits = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
  const __m512i inOrder = _mm512_set_epi16(
      31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22,
      6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  size_t i = 0;
  for (; i + kGroup <= count; i += kGroup) {
    const __m512i x = _mm512_loadu_si512(a + i);
    const __m512i y = _mm512_loadu_si512(b + i);
    const __m512 even =
        _mm512_add_ps(_mm512_castsi512_ps(_mm512_slli_epi32(x, 16)),
                      _mm512_castsi512_ps(_mm512_slli_epi32(y, 16)));
    const __m512 odd =
        _mm512_add_ps(_mm512_castsi512_ps(_mm512_and_si512(x, oddBits)),
                      _mm512_castsi512_ps(_mm512_and_si512(y, oddBits)));
    // Rare (a NaN or subnormal sum): the group takes the portable rounding
    // (its loads come first, so dst may be a or b).
    if ((_mm512_fpclass_ps_mask(even, kNanOrSubnormal) |
         _mm512_fpclass_ps_mask(odd, kNanOrSubnormal)) != 0) {
      scalar(i, i + kGroup);
      continue;
    }
    // Round to nearest even, as floatToBf16 does for every other value.
    // A vector cast: the bits as they are (std::bit_cast would be a
    // function built without AVX-512, which GCC refuses to pass zmm to).
    const __m512i packed = (__m512i)_mm512_cvtne2ps_pbh(odd, even);
    _mm512_storeu_si512(dst + i, _mm512_permutexvar_epi16(inOrder, packed));
  }
  scalar(i, count);
}

namespace {

// 8 halves summed: widened by VCVTPH2PS, rounded back to nearest even
// explicitly rather than by MXCSR's mode. 256 bits wide on purpose: Zen 4
// converts half precision no faster in zmm than in ymm, and the zmm
// VCVTPS2PH was this loop's limit (1 MiB in cache, this VM: 23.6 GB/s with
// zmm, 26.3 with ymm, where an integer add of the same buffers, with no
// conversion at all, moves 30.1 and memcpy 48.3).
MCL_AVX512 void sumHalves8(uint16_t* dst, const uint16_t* a,
                           const uint16_t* b) {
  const __m256 x =
      _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a)));
  const __m256 y =
      _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b)));
  const __m128i sum = _mm256_cvtps_ph(
      _mm256_add_ps(x, y), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), sum);
}

}  // namespace

MCL_AVX512 void sumHalfAvx512(void* dstRaw, const void* aRaw, const void* bRaw,
                              size_t count) {
  auto* dst = static_cast<uint16_t*>(dstRaw);
  const auto* a = static_cast<const uint16_t*>(aRaw);
  const auto* b = static_cast<const uint16_t*>(bRaw);
  size_t i = 0;
  // Two groups a turn: the loop's own instructions showed in cache.
  for (; i + 16 <= count; i += 16) {
    sumHalves8(dst + i, a + i, b + i);
    sumHalves8(dst + i + 8, a + i + 8, b + i + 8);
  }
  for (; i + 8 <= count; i += 8) sumHalves8(dst + i, a + i, b + i);
  for (; i < count; ++i)
    dst[i] = floatToHalf(halfToFloat(a[i]) + halfToFloat(b[i]));
}

#undef MCL_AVX512
#undef MCL_AVX512_ISA

}  // namespace mcl::kernels

#endif  // __x86_64__
