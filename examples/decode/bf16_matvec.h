// The one kernel of the example decoder (sharded_decode.cpp): a bfloat16
// weight matrix times a small batch of float vectors. Decoding a token
// streams every weight once, so this loop's rate over weights that do not
// fit the caches is the decoder's speed; `mcl-perf plan` times this same
// header to predict it (perf/plan/weight_rate.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace mcl_example {

// bfloat16 is the top half of a float32.
inline float bf16ToFloat(uint16_t v) {
  const uint32_t bits = uint32_t{v} << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

// Each row is widened and added in chunks of this many columns, in blocks
// of kMatvecLanes: the chunk of floats stays in L1 whatever the width,
// and a loop of a fixed trip count vectorizes under any compiler's cost
// model (GCC at -O2 vectorizes only those), so the decoder and `mcl-perf
// plan`, which time this code at different widths, run the same vector
// loop. (Measured on the CI VM, batch 1: 10-12 GB/s at 256-2816 columns,
// against 6-10 GB/s widening whole rows.)
constexpr size_t kMatvecLanes = 16;
constexpr size_t kMatvecChunk = 256;

// y[b][o] += sum over j of x[b][j] * w[j][o], for b < batch, j < in,
// o < out: w is row-major [in][out], x [batch][in], y [batch][out]. Each
// chunk of row j is widened to float once (into `row`, kMatvecChunk
// floats) and added to every vector of the batch: the weights are read
// once per call whatever the batch, as a batched decode step reads them.
// Every loop is elementwise: no sum is reassociated.
inline void matvecBf16(const uint16_t* __restrict w, const float* __restrict x,
                       float* __restrict y, size_t in, size_t out, size_t batch,
                       float* __restrict row) {
  for (size_t j = 0; j < in; ++j) {
    const uint16_t* wj = w + j * out;
    for (size_t c = 0; c < out; c += kMatvecChunk) {
      const size_t n = out - c < kMatvecChunk ? out - c : kMatvecChunk;
      const size_t whole = n - n % kMatvecLanes;
      for (size_t o = 0; o < whole; o += kMatvecLanes)
        for (size_t l = 0; l < kMatvecLanes; ++l)
          row[o + l] = bf16ToFloat(wj[c + o + l]);
      for (size_t o = whole; o < n; ++o) row[o] = bf16ToFloat(wj[c + o]);
      for (size_t b = 0; b < batch; ++b) {
        const float xj = x[b * in + j];
        float* yb = y + b * out + c;
        for (size_t o = 0; o < whole; o += kMatvecLanes)
          for (size_t l = 0; l < kMatvecLanes; ++l)
            yb[o + l] += xj * row[o + l];
        for (size_t o = whole; o < n; ++o) yb[o] += xj * row[o];
      }
    }
  }
}

}  // namespace mcl_example
