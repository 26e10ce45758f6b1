// Array conversions of halves. The scalar conversions in float_convert.h are
// correct everywhere but cost ~10 instructions per element; CPUs have
// instructions that convert 4 or 8 halves at once, which is what lets half
// reductions keep up with memory.
#include "algorithms/kernels/float_convert.h"

#include <cstddef>
#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace mcl::kernels {
namespace {

using HalfToFloatFn = void (*)(const uint16_t*, float*, size_t);
using FloatToHalfFn = void (*)(const float*, uint16_t*, size_t);

struct HalfConverters {
  HalfToFloatFn toFloat;
  FloatToHalfFn toHalf;
  const char* name;
};

#if !defined(__aarch64__)  // AArch64 always has FCVT
void halfToFloatPortable(const uint16_t* src, float* dst, size_t count) {
  for (size_t i = 0; i < count; ++i) dst[i] = halfToFloat(src[i]);
}

void floatToHalfPortable(const float* src, uint16_t* dst, size_t count) {
  for (size_t i = 0; i < count; ++i) dst[i] = floatToHalf(src[i]);
}
#endif

#if defined(__x86_64__)

// Compiled for AVX2+F16C whatever the build's baseline; only called after
// cpuHasAvx2F16c() said yes. The tails use the scalar code, which rounds the
// same.
__attribute__((target("avx2,f16c"))) void halfToFloatF16c(const uint16_t* src,
                                                          float* dst,
                                                          size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i halves =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(halves));
  }
  for (; i < count; ++i) dst[i] = halfToFloat(src[i]);
}

__attribute__((target("avx2,f16c"))) void floatToHalfF16c(const float* src,
                                                          uint16_t* dst,
                                                          size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    // Round to nearest even explicitly rather than trusting MXCSR's mode.
    const __m128i halves =
        _mm256_cvtps_ph(_mm256_loadu_ps(src + i),
                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), halves);
  }
  for (; i < count; ++i) dst[i] = floatToHalf(src[i]);
}

HalfConverters chooseHalfConverters() {
  if (cpuHasAvx2F16c()) return {halfToFloatF16c, floatToHalfF16c, "f16c"};
  return {halfToFloatPortable, floatToHalfPortable, "portable"};
}

#elif defined(__aarch64__)

// FCVT is baseline on AArch64 and rounds by FPCR, nearest-even by default.
void halfToFloatNeon(const uint16_t* src, float* dst, size_t count) {
  size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    const float16x4_t halves = vreinterpret_f16_u16(vld1_u16(src + i));
    vst1q_f32(dst + i, vcvt_f32_f16(halves));
  }
  for (; i < count; ++i) dst[i] = halfToFloat(src[i]);
}

void floatToHalfNeon(const float* src, uint16_t* dst, size_t count) {
  size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    const float16x4_t halves = vcvt_f16_f32(vld1q_f32(src + i));
    vst1_u16(dst + i, vreinterpret_u16_f16(halves));
  }
  for (; i < count; ++i) dst[i] = floatToHalf(src[i]);
}

HalfConverters chooseHalfConverters() {
  return {halfToFloatNeon, floatToHalfNeon, "neon"};
}

#else

HalfConverters chooseHalfConverters() {
  return {halfToFloatPortable, floatToHalfPortable, "portable"};
}

#endif

const HalfConverters& halfConverters() {
  static const HalfConverters chosen = chooseHalfConverters();
  return chosen;
}

}  // namespace

void halfToFloatArray(const uint16_t* src, float* dst, size_t count) {
  halfConverters().toFloat(src, dst, count);
}

void floatToHalfArray(const float* src, uint16_t* dst, size_t count) {
  halfConverters().toHalf(src, dst, count);
}

const char* halfConversionPath() { return halfConverters().name; }

#if defined(__x86_64__)
// Clang 14 does not know __builtin_cpu_supports("f16c"), so F16C is read
// from CPUID directly; "avx2" also confirms the OS saves the ymm registers.
bool cpuHasAvx2F16c() {
  static const bool supported = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
    __builtin_cpu_init();
    return (ecx & bit_F16C) != 0 && __builtin_cpu_supports("avx2") != 0;
  }();
  return supported;
}
#endif

}  // namespace mcl::kernels
