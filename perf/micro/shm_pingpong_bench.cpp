// Round trips over the shared-memory transport alone (no steps, no API):
// two ShmDevices of one communicator, their ranks as two threads spinning
// on the rings, so what is measured is the ring protocol and the cache-line
// hand-over between cores, the floor under every same-Mac collective.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "transports/shm/shm_segments.h"

namespace {

using mcl::transport::Connection;
using mcl::transport::shm::kCollectiveChannel;
using mcl::transport::shm::RingMemory;
using mcl::transport::shm::ShmSegments;

// Spins until `bytes` have arrived on c, consuming them.
bool receive(Connection& c, size_t bytes, const std::atomic<bool>& stop) {
  while (bytes > 0) {
    const auto piece = c.peekRecv();
    if (piece.empty()) {
      if (stop.load(std::memory_order_relaxed)) return false;
      continue;
    }
    const size_t n = std::min(bytes, piece.size());
    c.releaseRecv(n);
    bytes -= n;
  }
  return true;
}

void send(Connection& c, const std::byte* data, size_t bytes) {
  while (bytes > 0) {
    const auto space = c.acquireSend(bytes);
    if (space.empty()) continue;
    std::memcpy(space.data(), data, space.size());
    c.commitSend(space.size());
    data += space.size();
    bytes -= space.size();
  }
}

void shmRoundTrip(benchmark::State& state) {
  const auto bytes = size_t(state.range(0));
  ShmSegments rank0(0, {0, 1}, RingMemory::Shared, {});
  ShmSegments rank1(1, {0, 1}, RingMemory::Shared, {});
  rank0.mapPeer(1, rank1.segmentName(), getpid());
  rank1.mapPeer(0, rank0.segmentName(), getpid());
  rank0.unlinkOwnSegment();
  rank1.unlinkOwnSegment();
  std::unique_ptr<Connection> to1 = rank0.connect(1, kCollectiveChannel);
  std::unique_ptr<Connection> to0 = rank1.connect(0, kCollectiveChannel);

  std::atomic<bool> stop{false};
  std::thread echo([&] {
    std::vector<std::byte> message(bytes);
    while (receive(*to0, bytes, stop)) send(*to0, message.data(), bytes);
  });
  std::vector<std::byte> message(bytes, std::byte{1});
  for (auto _ : state) {
    send(*to1, message.data(), bytes);
    receive(*to1, bytes, stop);
  }
  stop = true;
  echo.join();
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes) * 2);
}

BENCHMARK(shmRoundTrip)
    ->Arg(8)
    ->Arg(4096)
    ->Arg(64 << 10)
    ->Arg(1 << 20)
    ->UseRealTime();

}  // namespace
