#include "qualify/mac_speed.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

namespace mcl::perf {

namespace {

constexpr size_t kBytes = size_t{64} << 20;  // past any Mac's caches
constexpr int kPasses = 5;

using Clock = std::chrono::steady_clock;

template <typename Pass>
double bestSeconds(Pass pass) {
  double best = 1e30;
  for (int i = 0; i < kPasses; ++i) {
    const auto start = Clock::now();
    pass();
    best = std::min(
        best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

// out = a + b, a loop the compiler vectorises: the Mac's capacity to
// reduce, not any one library's kernel.
void addFloats(const float* __restrict a, const float* __restrict b,
               float* __restrict out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

}  // namespace

MacSpeed measureMacSpeed() {
  const size_t n = kBytes / sizeof(float);
  // Touched before timing, so page faults are not measured.
  std::vector<float> a(n, 1.0f), b(n, 2.0f), out(n, 0.0f);
  MacSpeed speed;
  const double copy =
      bestSeconds([&] { std::memcpy(out.data(), a.data(), kBytes); });
  speed.memcpyGBps = double(kBytes) / copy / 1e9;
  const double reduce =
      bestSeconds([&] { addFloats(a.data(), b.data(), out.data(), n); });
  speed.reduceGBps = double(kBytes) / reduce / 1e9;
  // Keep the result observable, so the loops are not optimised away.
  volatile float sink = out[n / 2];
  (void)sink;
  return speed;
}

}  // namespace mcl::perf
