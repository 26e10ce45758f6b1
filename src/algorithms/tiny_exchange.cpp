#include "algorithms/tiny_exchange.h"

#include <cstddef>
#include <cstring>
#include <span>

#include "platform/cpu.h"

namespace mcl {

namespace {

// About 5 us of polls; where the ranks are crowded, a few turns of the
// core instead.
constexpr int kTinyPolls = 2000;
constexpr int kTinyCrowdedYields = 8;

}  // namespace

bool sendToEveryPeer(const std::byte* in, size_t bytes,
                     const AlgoContext& ctx) {
  const int n = ctx.nranks;
  for (int k = 1; k < n; ++k)
    if (ctx.peers[size_t((ctx.rank + k) % n)]->acquireSend(bytes).size() <
        bytes)
      return false;
  for (int k = 1; k < n; ++k) {
    transport::Connection* c = ctx.peers[size_t((ctx.rank + k) % n)];
    std::memcpy(c->acquireSend(bytes).data(), in, bytes);
    c->commitSend(bytes);
  }
  return true;
}

std::span<const std::byte> pollPiece(transport::Connection& c, size_t bytes,
                                     const AlgoContext& ctx) {
  std::span<const std::byte> got = c.peekRecv();
  if (ctx.wait.crowded()) {
    for (int i = 0; got.size() < bytes && i < kTinyCrowdedYields; ++i) {
      platform::yieldCpu();
      got = c.peekRecv();
    }
    return got;
  }
  for (int i = 0; got.size() < bytes && i < kTinyPolls; ++i) {
    platform::cpuRelax();
    got = c.peekRecv();
  }
  return got;
}

}  // namespace mcl
