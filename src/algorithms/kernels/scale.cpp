#include "algorithms/kernels/scale.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "algorithms/kernels/float_convert.h"

namespace mcl::kernels {

namespace {

// Elements are read and written through memcpy: the caller's buffer may be
// at any address (the C API takes misaligned pointers), and reading it
// through a misaligned T* is undefined; the compiler makes plain unaligned
// loads and stores of these.
template <typename T>
T loadAt(const void* base, size_t i) {
  T v;
  std::memcpy(&v, static_cast<const std::byte*>(base) + i * sizeof(T),
              sizeof(T));
  return v;
}

template <typename T>
void storeAt(void* base, size_t i, T v) {
  std::memcpy(static_cast<std::byte*>(base) + i * sizeof(T), &v, sizeof(T));
}

template <typename T>
void scaleNative(void* dst, const void* src, size_t count,
                 const void* scalarRaw) {
  T s;
  std::memcpy(&s, scalarRaw, sizeof(T));
  if constexpr (std::is_integral_v<T>) {
    // Through the unsigned type: wraps instead of overflowing.
    using U = std::make_unsigned_t<T>;
    for (size_t i = 0; i < count; ++i)
      storeAt(dst, i,
              static_cast<T>(static_cast<U>(static_cast<U>(loadAt<T>(src, i)) *
                                            static_cast<U>(s))));
  } else {
    for (size_t i = 0; i < count; ++i) storeAt(dst, i, loadAt<T>(src, i) * s);
  }
}

template <typename S, float (*Widen)(S), S (*Narrow)(float)>
void scaleNarrow(void* dst, const void* src, size_t count,
                 const void* scalarRaw) {
  S bits;
  std::memcpy(&bits, scalarRaw, sizeof(S));
  const float s = Widen(bits);
  for (size_t i = 0; i < count; ++i)
    storeAt(dst, i, Narrow(Widen(loadAt<S>(src, i)) * s));
}

}  // namespace

void scale(void* dst, const void* src, size_t count, mclDataType_t type,
           const void* scalar) {
  if (count == 0) return;
  switch (type) {
    case mclInt8:
      return scaleNative<int8_t>(dst, src, count, scalar);
    case mclUint8:
      return scaleNative<uint8_t>(dst, src, count, scalar);
    case mclInt32:
      return scaleNative<int32_t>(dst, src, count, scalar);
    case mclUint32:
      return scaleNative<uint32_t>(dst, src, count, scalar);
    case mclInt64:
      return scaleNative<int64_t>(dst, src, count, scalar);
    case mclUint64:
      return scaleNative<uint64_t>(dst, src, count, scalar);
    case mclFloat32:
      return scaleNative<float>(dst, src, count, scalar);
    case mclFloat64:
      return scaleNative<double>(dst, src, count, scalar);
    case mclFloat16:
      return scaleNarrow<uint16_t, halfToFloat, floatToHalf>(dst, src, count,
                                                             scalar);
    case mclBfloat16:
      return scaleNarrow<uint16_t, bf16ToFloat, floatToBf16>(dst, src, count,
                                                             scalar);
    case mclFloat8e4m3:
      return scaleNarrow<uint8_t, e4m3ToFloat, floatToE4m3>(dst, src, count,
                                                            scalar);
    case mclFloat8e5m2:
      return scaleNarrow<uint8_t, e5m2ToFloat, floatToE5m2>(dst, src, count,
                                                            scalar);
    default:
      throw std::invalid_argument("mcl kernels: invalid type " +
                                  std::to_string(static_cast<int>(type)));
  }
}

}  // namespace mcl::kernels
