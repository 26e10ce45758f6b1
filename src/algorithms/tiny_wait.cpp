#include "algorithms/tiny_wait.h"

#include <cstddef>
#include <cstdint>
#include <span>

#include "platform/cpu.h"

namespace mcl {

namespace {

constexpr int kPolls = 2000;
constexpr int kCrowdedYields = 8;
constexpr int64_t kCrowdedSpinNs = 10000;

}  // namespace

std::span<const std::byte> pollPiece(transport::Connection& c, size_t bytes,
                                     const AlgoContext& ctx) {
  std::span<const std::byte> got = c.peekRecv();
  if (ctx.wait.spinNs < kCrowdedSpinNs) {
    for (int i = 0; got.size() < bytes && i < kCrowdedYields; ++i) {
      platform::yieldCpu();
      got = c.peekRecv();
    }
    return got;
  }
  for (int i = 0; got.size() < bytes && i < kPolls; ++i) {
    platform::cpuRelax();
    got = c.peekRecv();
  }
  return got;
}

}  // namespace mcl
