#include "algorithms/kernels/stream_copy.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mcl::kernels {

#if defined(__x86_64__)
// SSE2 is baseline on x86-64: 16-byte streaming stores need nothing more.
void streamCopy(void* dstRaw, const void* srcRaw, size_t bytes) {
  auto* dst = static_cast<unsigned char*>(dstRaw);
  const auto* src = static_cast<const unsigned char*>(srcRaw);
  const size_t head =
      (16 - reinterpret_cast<uintptr_t>(dst) % 16) % 16;  // to alignment
  if (bytes < head + 64) {
    std::memcpy(dst, src, bytes);
    return;
  }
  std::memcpy(dst, src, head);
  size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    const __m128i a =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i b =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16));
    const __m128i c =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 32));
    const __m128i d =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), d);
  }
  std::memcpy(dst + i, src + i, bytes - i);
  _mm_sfence();  // streaming stores are weakly ordered
}
#else
void streamCopy(void* dst, const void* src, size_t bytes) {
  std::memcpy(dst, src, bytes);
}
#endif

}  // namespace mcl::kernels
