// Most loops here are written for the compiler's auto-vectorizer, so one
// source serves SSE, AVX and NEON:
//  - One fused loop per aliasing case loads, widens (half, bf16, fp8 to
//    float), combines, narrows and stores each element. Fusing matters: a
//    widen-to-scratch pipeline costs four extra stores per element, and
//    stores, not arithmetic, limit these loops once data sits in cache.
//  - Each loop is an outer loop over fixed-size blocks whose inner loop has a
//    constant trip count, plus a scalar tail. GCC at -O2 only vectorizes
//    loops whose vector code needs no epilogue, and this shape qualifies.
//  - Aliasing is resolved before the loop (dst == a, dst == b, both, or
//    neither) so every loop can promise __restrict; otherwise the compiler
//    adds a run-time overlap check that in-place calls would fail.
//  - Ops are functors inlined into the loop body; float max/min are written
//    as compare-and-select so they become vector compares and blends.
// Half needs the CPU's conversion instructions to be fast: __fp16 on
// AArch64 (the compiler vectorizes it), and on x86-64 an explicit AVX2+F16C
// kernel picked at run time, which also serves bfloat16 (see below), and
// AVX-512 sums where the CPU has AVX512-BF16 (half_sum_avx512.h). bfloat16
// on AArch64 has its own NEON kernel (bf16_neon.h). FP8 looks every result
// up in a table (see there).
#include "algorithms/kernels/reduce.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "algorithms/kernels/bf16_neon.h"
#include "algorithms/kernels/float_convert.h"
#include "algorithms/kernels/half_sum_avx512.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mcl::kernels {
namespace {

// Bytes of storage per inner block: a few vector registers on every target.
constexpr size_t kBlockBytes = 64;

std::atomic<bool> portableOnly{false};
std::atomic<bool> avx512Avoided{false};

bool cpuSpecificAllowed() {
  return !portableOnly.load(std::memory_order_relaxed);
}

// ---- Ops ----

struct SumOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      // Unsigned arithmetic wraps by definition; signed overflow is UB.
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  }
};

struct ProdOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      // 8-bit values promote to int, where 255 * 255 still fits.
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    } else {
      return a * b;
    }
  }
};

// For floats, "b != b" (b is NaN) picks b, and a NaN a is kept because every
// comparison with it is false: either NaN wins. Equal inputs give a.
struct MaxOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return (b > a || b != b) ? b : a;
    } else {
      return b > a ? b : a;
    }
  }
};

struct MinOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return (b < a || b != b) ? b : a;
    } else {
      return b < a ? b : a;
    }
  }
};

// ---- Codecs: how an element is stored and the type it is computed in ----

template <typename T>
struct NativeCodec {
  using Storage = T;
  static T widen(T v) { return v; }
  static T narrow(T v) { return v; }
};

struct Bf16Codec {
  using Storage = uint16_t;
  static float widen(uint16_t v) { return bf16ToFloat(v); }
  static uint16_t narrow(float v) { return floatToBf16(v); }
};

struct HalfCodec {
  using Storage = uint16_t;
  static float widen(uint16_t v) { return halfToFloat(v); }
  static uint16_t narrow(float v) { return floatToHalf(v); }
};

#if defined(__aarch64__)
// FCVT: baseline on AArch64, bit-identical to halfToFloat/floatToHalf under
// the default FPCR (nearest even, no flush). clang (Apple's, on the Macs)
// vectorizes these loops as FCVTL/FCVTN; GCC 12 at -O2 leaves them one
// element at a time (seen in the aarch64 cross build), still exact.
struct HalfFcvtCodec {
  using Storage = uint16_t;
  static float widen(uint16_t v) {
    return static_cast<float>(std::bit_cast<__fp16>(v));
  }
  static uint16_t narrow(float v) {
    return std::bit_cast<uint16_t>(static_cast<__fp16>(v));
  }
};
#endif

struct E4m3Codec {
  using Storage = uint8_t;
  static float widen(uint8_t v) { return e4m3ToFloat(v); }
  static uint8_t narrow(float v) { return floatToE4m3(v); }
};

struct E5m2Codec {
  using Storage = uint8_t;
  static float widen(uint8_t v) { return e5m2ToFloat(v); }
  static uint8_t narrow(float v) { return floatToE5m2(v); }
};

// ---- Fused loops, one per aliasing case ----

template <typename Codec, typename Op>
struct Combiner {
  using S = typename Codec::Storage;
  static constexpr size_t kLanes = kBlockBytes / sizeof(S);

  static S apply(S a, S b) {
    return Codec::narrow(Op{}(Codec::widen(a), Codec::widen(b)));
  }

  static void disjoint(S* __restrict dst, const S* __restrict a,
                       const S* __restrict b, size_t count) {
    size_t i = 0;
    for (; i + kLanes <= count; i += kLanes) {
      for (size_t j = 0; j < kLanes; ++j) {
        dst[i + j] = apply(a[i + j], b[i + j]);
      }
    }
    for (; i < count; ++i) dst[i] = apply(a[i], b[i]);
  }

  // acc[i] = apply(acc[i], other[i]), or apply(other[i], acc[i]) when
  // kAccIsB, so operand order (which max/min's tie rule sees) stays a, b.
  template <bool kAccIsB>
  static void into(S* __restrict acc, const S* __restrict other, size_t count) {
    auto step = [](S accValue, S otherValue) {
      return kAccIsB ? apply(otherValue, accValue)
                     : apply(accValue, otherValue);
    };
    size_t i = 0;
    for (; i + kLanes <= count; i += kLanes) {
      for (size_t j = 0; j < kLanes; ++j) {
        acc[i + j] = step(acc[i + j], other[i + j]);
      }
    }
    for (; i < count; ++i) acc[i] = step(acc[i], other[i]);
  }

  // dst == a == b.
  static void withItself(S* acc, size_t count) {
    size_t i = 0;
    for (; i + kLanes <= count; i += kLanes) {
      for (size_t j = 0; j < kLanes; ++j) {
        acc[i + j] = apply(acc[i + j], acc[i + j]);
      }
    }
    for (; i < count; ++i) acc[i] = apply(acc[i], acc[i]);
  }

  static void run(void* dstRaw, const void* aRaw, const void* bRaw,
                  size_t count) {
    S* dst = static_cast<S*>(dstRaw);
    const S* a = static_cast<const S*>(aRaw);
    const S* b = static_cast<const S*>(bRaw);
    if (dst == a && dst == b) {
      withItself(dst, count);
    } else if (dst == a) {
      into<false>(dst, b, count);
    } else if (dst == b) {
      into<true>(dst, a, count);
    } else {
      disjoint(dst, a, b, count);
    }
  }
};

// buf[i] = narrow(widen(buf[i]) / divisor). Divisor is the compute type, or
// int for 8-bit integers so that divisors above 127 stay exact.
template <typename Codec, typename Divisor>
void divideLoop(void* bufRaw, size_t count, Divisor divisor) {
  using S = typename Codec::Storage;
  constexpr size_t kLanes = kBlockBytes / sizeof(S);
  S* buf = static_cast<S*>(bufRaw);
  auto step = [divisor](S v) {
    using Compute = decltype(Codec::widen(v));
    // For 8-bit integers the quotient is an int that always fits back.
    return Codec::narrow(static_cast<Compute>(Codec::widen(v) / divisor));
  };
  size_t i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    for (size_t j = 0; j < kLanes; ++j) buf[i + j] = step(buf[i + j]);
  }
  for (; i < count; ++i) buf[i] = step(buf[i]);
}

// ---- FP8: a table of every result ----
// Two 8-bit operands make 65536 pairs. Each (format, op) computes its
// results once, with the scalar loop's own functions (so the bits are the
// same), and then a lookup per element replaces decoding, combining and
// the branchy rounding that keeps that loop scalar: 64 KiB that stay in
// the cache, 3.5 times the speed (1.5 GB/s against 0.42 at 1 MiB).
template <typename Codec, typename Op>
const uint8_t* fp8Table() {
  // Never freed: a kernel may run while the process exits.
  static const uint8_t* const table = [] {
    auto* t = new uint8_t[1 << 16];
    for (unsigned a = 0; a < 256; ++a)
      for (unsigned b = 0; b < 256; ++b)
        t[a << 8 | b] = Combiner<Codec, Op>::apply(static_cast<uint8_t>(a),
                                                   static_cast<uint8_t>(b));
    return t;
  }();
  return table;
}

template <typename Codec, typename Op>
void combineFp8(void* dstRaw, const void* aRaw, const void* bRaw,
                size_t count) {
  if (!cpuSpecificAllowed())
    return Combiner<Codec, Op>::run(dstRaw, aRaw, bRaw, count);
  const uint8_t* table = fp8Table<Codec, Op>();
  uint8_t* dst = static_cast<uint8_t*>(dstRaw);
  const uint8_t* a = static_cast<const uint8_t*>(aRaw);
  const uint8_t* b = static_cast<const uint8_t*>(bRaw);
  // Each element is read before it is written: dst may be a or b.
  for (size_t i = 0; i < count; ++i)
    dst[i] = table[static_cast<size_t>(a[i]) << 8 | b[i]];
}

// ---- Half and bfloat16 on x86-64: explicit AVX2 ----
//
// Baseline x86-64 (SSE2) has neither half conversions nor a cheap 32-to-16
// bit narrowing, so the portable loops above run at a fraction of memory
// speed for these types. These kernels are chosen at run time when the CPU
// has AVX2 and F16C, and match the portable path bit for bit.

#if defined(__x86_64__)
#define MCL_AVX2 __attribute__((target("avx2,f16c")))

// Vector forms of the ops, lane for lane the scalar functors, NaN rules too.
struct SumVec {
  MCL_AVX2 __m256 operator()(__m256 a, __m256 b) const {
    return _mm256_add_ps(a, b);
  }
};
struct ProdVec {
  MCL_AVX2 __m256 operator()(__m256 a, __m256 b) const {
    return _mm256_mul_ps(a, b);
  }
};
struct MaxVec {  // (b > a || b is NaN) ? b : a
  MCL_AVX2 __m256 operator()(__m256 a, __m256 b) const {
    const __m256 takeB = _mm256_or_ps(_mm256_cmp_ps(b, a, _CMP_GT_OQ),
                                      _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
    return _mm256_blendv_ps(a, b, takeB);
  }
};
struct MinVec {  // (b < a || b is NaN) ? b : a
  MCL_AVX2 __m256 operator()(__m256 a, __m256 b) const {
    const __m256 takeB = _mm256_or_ps(_mm256_cmp_ps(b, a, _CMP_LT_OQ),
                                      _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
    return _mm256_blendv_ps(a, b, takeB);
  }
};

// 8 halves <-> one vector of floats, by F16C.
struct HalfLanes {
  using Codec = HalfCodec;
  static constexpr size_t kVectors = 1;
  MCL_AVX2 static void load(const uint16_t* src, __m256 (&out)[kVectors]) {
    out[0] =
        _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
  }
  MCL_AVX2 static void store(uint16_t* dst, const __m256 (&in)[kVectors]) {
    const __m128i halves =
        _mm256_cvtps_ph(in[0], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), halves);
  }
};

// Each group is loaded before it is stored, so dst may equal a or b.
template <typename Lanes, typename VecOp, typename Op>
MCL_AVX2 void combineAvx2(void* dstRaw, const void* aRaw, const void* bRaw,
                          size_t count) {
  constexpr size_t kGroup = Lanes::kVectors * 8;
  uint16_t* dst = static_cast<uint16_t*>(dstRaw);
  const uint16_t* a = static_cast<const uint16_t*>(aRaw);
  const uint16_t* b = static_cast<const uint16_t*>(bRaw);
  size_t i = 0;
  for (; i + kGroup <= count; i += kGroup) {
    __m256 x[Lanes::kVectors];
    __m256 y[Lanes::kVectors];
    Lanes::load(a + i, x);
    Lanes::load(b + i, y);
    for (size_t k = 0; k < Lanes::kVectors; ++k) x[k] = VecOp{}(x[k], y[k]);
    Lanes::store(dst + i, x);
  }
  using Codec = typename Lanes::Codec;
  for (; i < count; ++i) {
    dst[i] = Codec::narrow(Op{}(Codec::widen(a[i]), Codec::widen(b[i])));
  }
}

bool useAvx2() { return cpuSpecificAllowed() && cpuHasAvx2F16c(); }

template <typename Lanes, typename Op>
void combine16Bit(void* dst, const void* a, const void* b, size_t count) {
  if (useAvx2()) {
    if constexpr (std::is_same_v<Op, SumOp>) {
      return combineAvx2<Lanes, SumVec, Op>(dst, a, b, count);
    } else if constexpr (std::is_same_v<Op, ProdOp>) {
      return combineAvx2<Lanes, ProdVec, Op>(dst, a, b, count);
    } else if constexpr (std::is_same_v<Op, MaxOp>) {
      return combineAvx2<Lanes, MaxVec, Op>(dst, a, b, count);
    } else {
      return combineAvx2<Lanes, MinVec, Op>(dst, a, b, count);
    }
  }
  Combiner<typename Lanes::Codec, Op>::run(dst, a, b, count);
}

// The AVX-512 sums (half_sum_avx512.h): where a decode step spends its
// reductions.
bool useAvx512Sums() {
  return cpuSpecificAllowed() &&
         !avx512Avoided.load(std::memory_order_relaxed) && cpuHasAvx512Bf16();
}

template <typename Op>
void combineHalf(void* dst, const void* a, const void* b, size_t count) {
  if constexpr (std::is_same_v<Op, SumOp>)
    if (useAvx512Sums()) return sumHalfAvx512(dst, a, b, count);
  combine16Bit<HalfLanes, Op>(dst, a, b, count);
}

// bfloat16 without shuffles: a 32-bit lane holds two elements, the even
// one in its low half and the odd one in its high half. Shifting the lane
// left 16 bits gives the even element as a float, masking its low half
// gives the odd one; after the op, each is rounded to its high 16 bits
// (floatToBf16's round to nearest even) and put back in its half. About 23
// instructions per 16 elements where unpacking and packing took 30; on the
// 2-core CI VM, 1 MiB in cache went from 15.6 to 16.6 GB/s and 64 MiB from
// 7.7 to 9.2 (medians of 3 interleaved runs): the loop is bound by its
// instruction count. A group whose results hold a NaN (rare: a NaN input,
// or inf - inf) takes the scalar path, which quiets it.
struct Bf16Pairs {
  MCL_AVX2 static __m256i roundBias(__m256i bits) {
    const __m256i lsb =
        _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    return _mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7fff)),
                            lsb);
  }
};

template <typename VecOp, typename Op>
MCL_AVX2 void combineBf16Avx2(void* dstRaw, const void* aRaw, const void* bRaw,
                              size_t count) {
  constexpr size_t kGroup = 16;
  uint16_t* dst = static_cast<uint16_t*>(dstRaw);
  const uint16_t* a = static_cast<const uint16_t*>(aRaw);
  const uint16_t* b = static_cast<const uint16_t*>(bRaw);
  const __m256i highHalves = _mm256_set1_epi32(static_cast<int>(0xffff0000u));
  auto scalar = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i)
      dst[i] = Bf16Codec::narrow(
          Op{}(Bf16Codec::widen(a[i]), Bf16Codec::widen(b[i])));
  };
  size_t i = 0;
  for (; i + kGroup <= count; i += kGroup) {
    const __m256i x =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i));
    const __m256i y =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i));
    const __m256 even = VecOp{}(_mm256_castsi256_ps(_mm256_slli_epi32(x, 16)),
                                _mm256_castsi256_ps(_mm256_slli_epi32(y, 16)));
    const __m256 odd =
        VecOp{}(_mm256_castsi256_ps(_mm256_and_si256(x, highHalves)),
                _mm256_castsi256_ps(_mm256_and_si256(y, highHalves)));
    // Either result NaN in some lane: the scalar path (loaded first, so dst
    // may be a or b).
    const __m256 nan = _mm256_cmp_ps(even, odd, _CMP_UNORD_Q);
    if (!_mm256_testz_ps(nan, nan)) {
      scalar(i, i + kGroup);
      continue;
    }
    const __m256i evenBits =
        _mm256_srli_epi32(Bf16Pairs::roundBias(_mm256_castps_si256(even)), 16);
    const __m256i oddBits = _mm256_and_si256(
        Bf16Pairs::roundBias(_mm256_castps_si256(odd)), highHalves);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm256_or_si256(evenBits, oddBits));
  }
  scalar(i, count);
}

template <typename Op>
void combineBf16(void* dst, const void* a, const void* b, size_t count) {
  if constexpr (std::is_same_v<Op, SumOp>)
    if (useAvx512Sums()) return sumBf16Avx512(dst, a, b, count);
  if (useAvx2()) {
    if constexpr (std::is_same_v<Op, SumOp>) {
      return combineBf16Avx2<SumVec, Op>(dst, a, b, count);
    } else if constexpr (std::is_same_v<Op, ProdOp>) {
      return combineBf16Avx2<ProdVec, Op>(dst, a, b, count);
    } else if constexpr (std::is_same_v<Op, MaxOp>) {
      return combineBf16Avx2<MaxVec, Op>(dst, a, b, count);
    } else {
      return combineBf16Avx2<MinVec, Op>(dst, a, b, count);
    }
  }
  Combiner<Bf16Codec, Op>::run(dst, a, b, count);
}

const char* cpuSpecificPath() {
  if (useAvx512Sums()) return "avx512";
  return cpuHasAvx2F16c() ? "avx2" : nullptr;
}

#undef MCL_AVX2
#else

template <typename Op>
void combineHalf(void* dst, const void* a, const void* b, size_t count) {
#if defined(__aarch64__)
  if (cpuSpecificAllowed()) {
    return Combiner<HalfFcvtCodec, Op>::run(dst, a, b, count);
  }
#endif
  Combiner<HalfCodec, Op>::run(dst, a, b, count);
}

template <typename Op>
void combineBf16(void* dst, const void* a, const void* b, size_t count) {
#if defined(__aarch64__)
  if (cpuSpecificAllowed()) {
    constexpr Bf16NeonOp kOp = std::is_same_v<Op, SumOp>    ? Bf16NeonOp::kSum
                               : std::is_same_v<Op, ProdOp> ? Bf16NeonOp::kProd
                               : std::is_same_v<Op, MaxOp>  ? Bf16NeonOp::kMax
                                                            : Bf16NeonOp::kMin;
    return combineBf16Neon(kOp, dst, a, b, count);
  }
#endif
  Combiner<Bf16Codec, Op>::run(dst, a, b, count);
}

#if defined(__aarch64__)
const char* cpuSpecificPath() { return "neon"; }
#else
const char* cpuSpecificPath() { return nullptr; }
#endif

#endif

// Half division converts through the array functions (F16C or NEON) in
// chunks; it runs once per all-reduce, so a scratch buffer is fine here.
void divideHalf(void* bufRaw, size_t count, float divisor) {
  if (!cpuSpecificAllowed()) {
    return divideLoop<HalfCodec>(bufRaw, count, divisor);
  }
  constexpr size_t kChunk = 256;
  uint16_t* buf = static_cast<uint16_t*>(bufRaw);
  float wide[kChunk];
  for (size_t start = 0; start < count; start += kChunk) {
    const size_t n = std::min(kChunk, count - start);
    halfToFloatArray(buf + start, wide, n);
    divideLoop<NativeCodec<float>>(wide, n, divisor);
    floatToHalfArray(wide, buf + start, n);
  }
}

// ---- Dispatch ----

[[noreturn]] void throwInvalid(const char* what, int value) {
  throw std::invalid_argument(std::string("mcl kernels: invalid ") + what +
                              " " + std::to_string(value));
}

template <typename Op>
void reduceWithOp(void* dst, const void* a, const void* b, size_t count,
                  mclDataType_t type) {
  switch (type) {
    case mclInt8:
      return Combiner<NativeCodec<int8_t>, Op>::run(dst, a, b, count);
    case mclUint8:
      return Combiner<NativeCodec<uint8_t>, Op>::run(dst, a, b, count);
    case mclInt32:
      return Combiner<NativeCodec<int32_t>, Op>::run(dst, a, b, count);
    case mclUint32:
      return Combiner<NativeCodec<uint32_t>, Op>::run(dst, a, b, count);
    case mclInt64:
      return Combiner<NativeCodec<int64_t>, Op>::run(dst, a, b, count);
    case mclUint64:
      return Combiner<NativeCodec<uint64_t>, Op>::run(dst, a, b, count);
    case mclFloat32:
      return Combiner<NativeCodec<float>, Op>::run(dst, a, b, count);
    case mclFloat64:
      return Combiner<NativeCodec<double>, Op>::run(dst, a, b, count);
    case mclFloat16:
      return combineHalf<Op>(dst, a, b, count);
    case mclBfloat16:
      return combineBf16<Op>(dst, a, b, count);
    case mclFloat8e4m3:
      return combineFp8<E4m3Codec, Op>(dst, a, b, count);
    case mclFloat8e5m2:
      return combineFp8<E5m2Codec, Op>(dst, a, b, count);
    case mclNumTypes:
      break;
  }
  throwInvalid("data type", type);
}

}  // namespace

void reduce(void* dst, const void* a, const void* b, size_t count,
            mclDataType_t type, mclRedOp_t op) {
  switch (op) {
    case mclSum:
    case mclAvg:  // the division by nranks comes later, in divide()
      return reduceWithOp<SumOp>(dst, a, b, count, type);
    case mclProd:
      return reduceWithOp<ProdOp>(dst, a, b, count, type);
    case mclMax:
      return reduceWithOp<MaxOp>(dst, a, b, count, type);
    case mclMin:
      return reduceWithOp<MinOp>(dst, a, b, count, type);
    case mclNumOps:
    case mclMaxRedOp:
      break;
  }
  throwInvalid("reduction op", op);
}

void divide(void* buf, size_t count, mclDataType_t type, int divisor) {
  if (divisor < 1) throwInvalid("divisor", divisor);
  const float floatDivisor = static_cast<float>(divisor);
  switch (type) {
    case mclInt8:
      return divideLoop<NativeCodec<int8_t>>(buf, count, divisor);
    case mclUint8:
      return divideLoop<NativeCodec<uint8_t>>(buf, count, divisor);
    case mclInt32:
      return divideLoop<NativeCodec<int32_t>>(buf, count, divisor);
    case mclUint32:
      return divideLoop<NativeCodec<uint32_t>>(buf, count,
                                               static_cast<uint32_t>(divisor));
    case mclInt64:
      return divideLoop<NativeCodec<int64_t>>(buf, count,
                                              static_cast<int64_t>(divisor));
    case mclUint64:
      return divideLoop<NativeCodec<uint64_t>>(buf, count,
                                               static_cast<uint64_t>(divisor));
    case mclFloat32:
      return divideLoop<NativeCodec<float>>(buf, count, floatDivisor);
    case mclFloat64:
      return divideLoop<NativeCodec<double>>(buf, count,
                                             static_cast<double>(divisor));
    case mclFloat16:
      return divideHalf(buf, count, floatDivisor);
    case mclBfloat16:
      return divideLoop<Bf16Codec>(buf, count, floatDivisor);
    case mclFloat8e4m3:
      return divideLoop<E4m3Codec>(buf, count, floatDivisor);
    case mclFloat8e5m2:
      return divideLoop<E5m2Codec>(buf, count, floatDivisor);
    case mclNumTypes:
      break;
  }
  throwInvalid("data type", type);
}

void copy(void* dst, const void* src, size_t bytes) {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

const char* kernelPath() {
  const char* path = cpuSpecificAllowed() ? cpuSpecificPath() : nullptr;
  return path ? path : "portable";
}

void forcePortableKernels(bool portable) {
  portableOnly.store(portable, std::memory_order_relaxed);
}

void avoidAvx512Kernels(bool avoid) {
  avx512Avoided.store(avoid, std::memory_order_relaxed);
}

}  // namespace mcl::kernels
