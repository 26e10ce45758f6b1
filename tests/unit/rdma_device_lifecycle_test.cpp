// RDMA teardown, object by object, on the emulated fabric: two Macs of one
// fabric in this process (their wires are shared memory either way), built,
// connected, used and destroyed 1000 times. Every queue pair, completion
// queue, memory region and device (with its protection domain) must be gone
// after each cycle, and no wire file, descriptor or heap memory left behind.
// (tests/integration/rdma_lifecycle_test.cpp does the same through the
// public API, one process per rank.)
#include <gtest/gtest.h>

#if defined(__linux__)  // /proc and glibc's mallinfo2
#include <malloc.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "emu_rdma_options.h"
#include "transports/rdma/emu_provider.h"
#include "transports/rdma/rdma_wires.h"

namespace mcl::transport::rdma {
namespace {

namespace fs = std::filesystem;

size_t countEntries(const char* dir, const std::string& prefix) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0) ++n;
  return n;
}

// Sends `bytes` from a to b over their channel-0 connections.
void sendAcross(Connection& from, Connection& to, size_t bytes) {
  std::vector<std::byte> data(bytes, std::byte{0x5a});
  size_t sent = 0;
  size_t got = 0;
  for (int spins = 0; got < bytes && spins < 10'000'000; ++spins) {
    if (sent < bytes) {
      auto slot = from.acquireSend(bytes - sent);
      if (!slot.empty()) {
        memcpy(slot.data(), data.data() + sent, slot.size());
        from.commitSend(slot.size());
        sent += slot.size();
      }
    }
    from.progress();
    auto in = to.peekRecv();
    if (!in.empty()) {
      ASSERT_EQ(in[0], std::byte{0x5a});
      to.releaseRecv(in.size());
      got += in.size();
    }
    to.progress();
  }
  ASSERT_EQ(got, bytes);
}

void oneCycle(int cycle, bool useIt) {
  std::string ns =
      "lc" + std::to_string(getpid()) + "-" + std::to_string(cycle);
  RdmaWires mac0(0, emuOptions("pair2", 0, ns));
  RdmaWires mac1(1, emuOptions("pair2", 1, ns));
  mac0.createWires(mac0.emulatedPlan({1}, {0, 1}));
  mac1.createWires(mac1.emulatedPlan({0}, {0, 1}));
  std::vector<std::vector<uint8_t>> all = {mac0.addresses(), mac1.addresses()};
  mac0.connectWires(all);
  mac1.connectWires(all);
  std::unique_ptr<Connection> a = mac0.connect(1, 0);
  std::unique_ptr<Connection> b = mac1.connect(0, 0);
  std::unique_ptr<Connection> p2pA = mac0.connect(1, 1);
  std::unique_ptr<Connection> p2pB = mac1.connect(0, 1);
  EmuLiveObjects live = emuLiveObjects();
  // Two cables x two channels per Mac: 8 queue pairs, one device per cable.
  EXPECT_EQ(live.queuePairs, 8);
  EXPECT_EQ(live.contexts, 4);
  if (useIt) sendAcross(*a, *b, 256 * 1024);
}

TEST(RdmaDeviceLifecycle, ThousandCyclesLeaveNoVerbsObjectBehind) {
  oneCycle(-1, true);  // the first cycle may grow lasting caches
  const size_t fdsBefore = countEntries("/proc/self/fd", "");
  const size_t heapBefore = mallinfo2().uordblks;
  for (int cycle = 0; cycle < 1000; ++cycle) {
    oneCycle(cycle, cycle % 50 == 0);
    if (HasFailure()) FAIL() << "cycle " << cycle;
    EmuLiveObjects live = emuLiveObjects();
    ASSERT_EQ(live.contexts, 0) << "cycle " << cycle;
    ASSERT_EQ(live.queuePairs, 0) << "cycle " << cycle;
    ASSERT_EQ(live.completionQueues, 0) << "cycle " << cycle;
    ASSERT_EQ(live.memoryRegions, 0) << "cycle " << cycle;
  }
  EXPECT_EQ(countEntries("/proc/self/fd", ""), fdsBefore);
  EXPECT_EQ(countEntries("/dev/shm", "mcl-e-lc" + std::to_string(getpid())),
            0u);
  // One leaked 4 KiB frame per cycle would be 4 MiB.
  EXPECT_LT(mallinfo2().uordblks, heapBefore + 512 * 1024);
  EXPECT_EQ(emuFramesDropped(), 0u);
}

}  // namespace
}  // namespace mcl::transport::rdma
#endif
