#include "plan/weight_rate.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "bf16_matvec.h"

namespace mcl::perf::plan {

namespace {

using Clock = std::chrono::steady_clock;

// A matrix well past any Mac's or server's last-level cache, with rows as
// long as a mid-size model's (the decoder's row length matters little).
constexpr size_t kColumns = 4096;
constexpr size_t kRowsOutOfCache = 16384;  // 128 MiB of bf16
// In cache: 1 MiB of weights, a batch that makes the arithmetic the limit.
constexpr size_t kRowsInCache = 128;
constexpr size_t kBatch = 32;
constexpr int kPasses = 5;

double bestSeconds(const std::vector<uint16_t>& w, size_t rows, size_t batch) {
  std::vector<float> x(rows * batch, 0.001f);
  std::vector<float> y(kColumns * batch, 0.0f);
  std::vector<float> row(kColumns);
  double best = 1e30;
  for (int pass = 0; pass < kPasses; ++pass) {
    const Clock::time_point start = Clock::now();
    mcl_example::matvecBf16(w.data(), x.data(), y.data(), rows, kColumns, batch,
                            row.data());
    const std::chrono::duration<double> took = Clock::now() - start;
    best = std::min(best, took.count());
  }
  // Keep the result alive: a compiler may not drop the work.
  volatile float sink = y[0];
  (void)sink;
  return best;
}

std::vector<uint16_t> weights(size_t rows) {
  std::vector<uint16_t> w(rows * kColumns);
  uint32_t state = 12345;
  for (uint16_t& v : w) {
    state = state * 1664525u + 1013904223u;
    // Small values: the sums stay finite and normal (no slow subnormals).
    v = mcl_example::floatToBf16(static_cast<float>(state >> 8) * 1e-9f);
  }
  return w;
}

}  // namespace

double measureWeightRate() {
  const std::vector<uint16_t> big = weights(kRowsOutOfCache);
  return double(big.size() * sizeof(uint16_t)) /
         bestSeconds(big, kRowsOutOfCache, 1);
}

double measureFlopsRate() {
  const std::vector<uint16_t> small = weights(kRowsInCache);
  return 2.0 * double(kRowsInCache * kColumns * kBatch) /
         bestSeconds(small, kRowsInCache, kBatch);
}

}  // namespace mcl::perf::plan
