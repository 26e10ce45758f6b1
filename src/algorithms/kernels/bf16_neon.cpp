#include "algorithms/kernels/bf16_neon.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "algorithms/kernels/float_convert.h"

namespace mcl::kernels {

namespace {

// The scalar ops, as the portable loops define them (max and min take b
// when it is NaN).
template <Bf16NeonOp kOp>
float apply(float a, float b) {
  if constexpr (kOp == Bf16NeonOp::kSum) return a + b;
  if constexpr (kOp == Bf16NeonOp::kProd) return a * b;
  if constexpr (kOp == Bf16NeonOp::kMax)
    return (b > a || std::isnan(b)) ? b : a;
  return (b < a || std::isnan(b)) ? b : a;
}

template <Bf16NeonOp kOp>
float32x4_t applyVec(float32x4_t a, float32x4_t b) {
  if constexpr (kOp == Bf16NeonOp::kSum) return vaddq_f32(a, b);
  if constexpr (kOp == Bf16NeonOp::kProd) return vmulq_f32(a, b);
  const uint32x4_t bIsNan = vmvnq_u32(vceqq_f32(b, b));
  const uint32x4_t better =
      kOp == Bf16NeonOp::kMax ? vcgtq_f32(b, a) : vcltq_f32(b, a);
  return vbslq_f32(vorrq_u32(better, bIsNan), b, a);
}

// floatToBf16's round to nearest even on the top 16 bits of each lane:
// bits + 0x7fff + (bit 16).
uint32x4_t roundToTop(float32x4_t v) {
  const uint32x4_t bits = vreinterpretq_u32_f32(v);
  const uint32x4_t lsb = vandq_u32(vshrq_n_u32(bits, 16), vdupq_n_u32(1));
  return vaddq_u32(vaddq_u32(bits, vdupq_n_u32(0x7fff)), lsb);
}

// A 32-bit lane holds two elements, the even one in its low half and the
// odd one in its high half: shifted left, the even one is a float; masked,
// the odd one. After the op each is rounded to its top half, and SRI puts
// the even result back in the low half.
template <Bf16NeonOp kOp>
void combine(uint16_t* dst, const uint16_t* a, const uint16_t* b,
             size_t count) {
  constexpr size_t kGroup = 8;
  const uint32x4_t highHalves = vdupq_n_u32(0xffff0000u);
  auto scalar = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i)
      dst[i] = floatToBf16(apply<kOp>(bf16ToFloat(a[i]), bf16ToFloat(b[i])));
  };
  size_t i = 0;
  for (; i + kGroup <= count; i += kGroup) {
    const uint32x4_t x = vreinterpretq_u32_u16(vld1q_u16(a + i));
    const uint32x4_t y = vreinterpretq_u32_u16(vld1q_u16(b + i));
    const float32x4_t even =
        applyVec<kOp>(vreinterpretq_f32_u32(vshlq_n_u32(x, 16)),
                      vreinterpretq_f32_u32(vshlq_n_u32(y, 16)));
    const float32x4_t odd =
        applyVec<kOp>(vreinterpretq_f32_u32(vandq_u32(x, highHalves)),
                      vreinterpretq_f32_u32(vandq_u32(y, highHalves)));
    // A NaN result in some lane (rare): the scalar path quiets it as the
    // portable loop does (loaded first, so dst may be a or b).
    const uint32x4_t ordered =
        vandq_u32(vceqq_f32(even, even), vceqq_f32(odd, odd));
    if (vminvq_u32(ordered) == 0) {
      scalar(i, i + kGroup);
      continue;
    }
    const uint32x4_t packed =
        vsriq_n_u32(roundToTop(odd), roundToTop(even), 16);
    vst1q_u16(dst + i, vreinterpretq_u16_u32(packed));
  }
  scalar(i, count);
}

}  // namespace

void combineBf16Neon(Bf16NeonOp op, void* dstRaw, const void* aRaw,
                     const void* bRaw, size_t count) {
  auto* dst = static_cast<uint16_t*>(dstRaw);
  const auto* a = static_cast<const uint16_t*>(aRaw);
  const auto* b = static_cast<const uint16_t*>(bRaw);
  switch (op) {
    case Bf16NeonOp::kSum:
      return combine<Bf16NeonOp::kSum>(dst, a, b, count);
    case Bf16NeonOp::kProd:
      return combine<Bf16NeonOp::kProd>(dst, a, b, count);
    case Bf16NeonOp::kMax:
      return combine<Bf16NeonOp::kMax>(dst, a, b, count);
    case Bf16NeonOp::kMin:
      return combine<Bf16NeonOp::kMin>(dst, a, b, count);
  }
}

}  // namespace mcl::kernels

#endif  // __aarch64__
