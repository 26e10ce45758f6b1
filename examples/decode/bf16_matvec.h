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

// y[b][o] += sum over j of x[b][j] * w[j][o], for b < batch, j < in,
// o < out: w is row-major [in][out], x [batch][in], y [batch][out]. Row j
// is widened to float once (into `row`, out floats) and added to every
// vector of the batch: the weights are read once per call whatever the
// batch, as a batched decode step reads them. Every loop is elementwise,
// so compilers vectorize it without reassociating sums.
inline void matvecBf16(const uint16_t* w, const float* x, float* y, size_t in,
                       size_t out, size_t batch, float* row) {
  for (size_t j = 0; j < in; ++j) {
    const uint16_t* wj = w + j * out;
    for (size_t o = 0; o < out; ++o) row[o] = bf16ToFloat(wj[o]);
    for (size_t b = 0; b < batch; ++b) {
      const float xj = x[b * in + j];
      float* yb = y + b * out;
      for (size_t o = 0; o < out; ++o) yb[o] += xj * row[o];
    }
  }
}

}  // namespace mcl_example
