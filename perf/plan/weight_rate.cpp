#include "plan/weight_rate.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "bf16_matvec.h"

namespace mcl::perf::plan {

namespace {

using Clock = std::chrono::steady_clock;

// Each width is timed over this many bytes of weights: past any Mac's or
// server's last-level cache.
constexpr size_t kBytesOutOfCache = size_t{64} << 20;
// In cache: 1 MiB of weights, a batch that makes the arithmetic the limit.
constexpr size_t kColumnsInCache = 4096;
constexpr size_t kRowsInCache = 128;
constexpr size_t kBatch = 32;
constexpr int kPasses = 5;

// The median of kPasses timed passes: a decode step meets the machine as
// it typically is, not at its best moment.
double medianSeconds(const std::vector<uint16_t>& w, size_t rows,
                     size_t columns, size_t batch) {
  std::vector<float> x(rows * batch, 0.001f);
  std::vector<float> y(columns * batch, 0.0f);
  std::vector<float> row(std::max(columns, mcl_example::kMatvecChunk));
  std::vector<double> seconds;
  for (int pass = 0; pass < kPasses; ++pass) {
    const Clock::time_point start = Clock::now();
    mcl_example::matvecBf16(w.data(), x.data(), y.data(), rows, columns, batch,
                            row.data());
    const std::chrono::duration<double> took = Clock::now() - start;
    seconds.push_back(took.count());
  }
  // Keep the result alive: a compiler may not drop the work.
  volatile float sink = y[0];
  (void)sink;
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

std::vector<uint16_t> weights(size_t count) {
  std::vector<uint16_t> w(count);
  uint32_t state = 12345;
  for (uint16_t& v : w) {
    state = state * 1664525u + 1013904223u;
    // Small values: the sums stay finite and normal (no slow subnormals).
    v = mcl_example::floatToBf16(static_cast<float>(state >> 8) * 1e-9f);
  }
  return w;
}

}  // namespace

double measureWeightRate(const std::vector<MatrixUse>& matrices) {
  // Made once: every rate of the run reads the same weights.
  static const std::vector<uint16_t> w =
      weights(kBytesOutOfCache / sizeof(uint16_t));
  std::map<size_t, double> rateOf;  // weights per second, by width
  double weightsPerToken = 0;
  double secondsPerToken = 0;
  for (const MatrixUse& m : matrices) {
    if (rateOf.count(m.columns) == 0) {
      const size_t rows = std::max<size_t>(1, w.size() / m.columns);
      rateOf[m.columns] =
          double(rows * m.columns) / medianSeconds(w, rows, m.columns, 1);
    }
    weightsPerToken += m.weightsPerToken;
    secondsPerToken += m.weightsPerToken / rateOf[m.columns];
  }
  return secondsPerToken > 0
             ? sizeof(uint16_t) * weightsPerToken / secondsPerToken
             : 0;
}

double measureFlopsRate() {
  const std::vector<uint16_t> small = weights(kRowsInCache * kColumnsInCache);
  return 2.0 * double(kRowsInCache * kColumnsInCache * kBatch) /
         medianSeconds(small, kRowsInCache, kColumnsInCache, kBatch);
}

}  // namespace mcl::perf::plan
