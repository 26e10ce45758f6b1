// A ring all-reduce over real RDMA connections on the emulated fabric: three
// Macs of a ring of cables in this process, their lanes run together in one
// thread, with rounds sized from the connections' capacity the way
// comm_init.cpp sizes them. Each round fills the windows of the ring; if
// that capacity counted a frame the sender cannot use (the credit kept for
// credit-only frames) or a step that does not end on a frame boundary, the
// ring would wait on itself: the test would time out. Also how a
// connection takes a malformed frame, and frames lost, duplicated or
// delayed on the cables (MCL_EMU_FAULTS): resent, never wrong data.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/collectives.h"
#include "algorithms/executor.h"
#include "base/error.h"
#include "emu_rdma_options.h"
#include "transports/rdma/emu_provider.h"
#include "transports/rdma/rdma_connection.h"
#include "transports/rdma/rdma_wires.h"

namespace mcl::transport::rdma {
namespace {

constexpr int kMacs = 3;

// The three Macs' processes in one: a nap services every Mac's
// connections, as each process' own waker does for its communicator.
class ServicingWaker final : public Waker {
 public:
  explicit ServicingWaker(std::vector<std::unique_ptr<RdmaWires>>& devices)
      : devices_(devices) {}
  uint32_t arm() override { return 0; }
  void sleep(uint32_t, int64_t) override {
    for (auto& d : devices_) d->serviceConnections();
  }
  void disarm() override {}
  void interrupt() override {}
  int64_t napNs() const override { return 1; }

 private:
  std::vector<std::unique_ptr<RdmaWires>>& devices_;
};

struct EmuRing {
  std::vector<std::unique_ptr<RdmaWires>> devices;
  std::vector<std::vector<std::unique_ptr<Connection>>> connections;
  std::vector<AlgoContext> contexts;
  std::vector<CallScratch> scratch;
  ServicingWaker waker{devices};

  EmuRing(const FrameShape& shape, int cycle, const std::string& faults = "")
      : contexts(kMacs), scratch(kMacs) {
    const std::string ns =
        "rr" + std::to_string(getpid()) + "-" + std::to_string(cycle);
    for (int mac = 0; mac < kMacs; ++mac) {
      RdmaOptions o = emuOptions("ring3", mac, ns);
      o.shape = shape;
      o.provider.emuFaults = faults;
      o.provider.emuMacos = "26.3";  // frames over 4 KiB as well
      devices.push_back(std::make_unique<RdmaWires>(mac, o));
    }
    std::vector<std::vector<uint8_t>> all;
    for (int mac = 0; mac < kMacs; ++mac) {
      std::vector<int> peers;
      for (int p = 0; p < kMacs; ++p)
        if (p != mac) peers.push_back(p);
      devices[size_t(mac)]->createWires(
          devices[size_t(mac)]->emulatedPlan(peers, {0, 1, 2}));
      all.push_back(devices[size_t(mac)]->addresses());
    }
    for (auto& d : devices) d->connectWires(all);
    connections.resize(kMacs);
    for (int mac = 0; mac < kMacs; ++mac) {
      AlgoContext& c = contexts[size_t(mac)];
      c.rank = mac;
      c.nranks = kMacs;
      c.peers.assign(kMacs, nullptr);
      c.waker = &waker;
      c.call = &scratch[size_t(mac)];
      c.timeout = std::chrono::seconds(3);
      c.maxStepBytes = devices[size_t(mac)]->capacityPerWire() / 2;
      c.forced[size_t(Collective::AllReduce)] = Algorithm::Ring;
      for (int p = 0; p < kMacs; ++p)
        if (p != mac) {
          connections[size_t(mac)].push_back(
              devices[size_t(mac)]->connect(p, 0));
          c.peers[size_t(p)] = connections[size_t(mac)].back().get();
        }
    }
  }
};

void expectRingAllReduceCompletes(const FrameShape& shape, int cycle,
                                  const std::string& faults = "",
                                  int rounds = 3) {
  EmuRing ring(shape, cycle, faults);
  // Several rounds, and a count that leaves a partial last frame per step.
  const size_t count = rounds * ring.contexts[0].maxStepBytes + 1001;
  std::vector<std::vector<int32_t>> in(kMacs), out(kMacs);
  std::vector<std::vector<Step>> steps(kMacs);
  std::vector<Lane> lanes(kMacs);
  for (int mac = 0; mac < kMacs; ++mac) {
    for (size_t i = 0; i < count; ++i)
      in[size_t(mac)].push_back(int32_t(i % 1000) * (mac + 1));
    out[size_t(mac)].assign(count, 0);
    OpArgs op;
    op.kind = Collective::AllReduce;
    op.sendbuff = in[size_t(mac)].data();
    op.recvbuff = out[size_t(mac)].data();
    op.count = count;
    op.type = mclInt32;
    op.op = mclSum;
    appendSteps(op, ring.contexts[size_t(mac)], steps[size_t(mac)]);
    lanes[size_t(mac)].context = &ring.contexts[size_t(mac)];
    lanes[size_t(mac)].steps = steps[size_t(mac)];
  }
  ASSERT_NO_THROW(runLanes(lanes));
  for (int mac = 0; mac < kMacs; ++mac)
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(out[size_t(mac)][i], int32_t(i % 1000) * 6)
          << "Mac " << mac << " element " << i;
}

TEST(RdmaRing, RoundsSizedFromTheCapacityNeverDeadlock) {
  int cycle = 0;
  // Frames over 4 KiB (macOS 26.3) as well: every SEND must cover as many
  // 4 KiB Thunderbolt frames as its receive, or data lands misplaced.
  for (int depth : {8, 9, 16, 32})
    for (uint32_t frameBytes : {128u, 4096u, 6144u, 16384u}) {
      SCOPED_TRACE("depth " + std::to_string(depth) + ", frames of " +
                   std::to_string(frameBytes));
      expectRingAllReduceCompletes({frameBytes, depth}, cycle++);
      if (HasFailure()) return;
    }
}

// UC loses frames without a word (a cable, a Linux-to-Mac path): a ring
// all-reduce with frames dropped, duplicated or held back on every cable
// still gives every element exactly, and the losses were seen and resent.
TEST(RdmaRing, LostDuplicatedAndDelayedFramesCostResendsNeverWrongData) {
  int cycle = 200;
  for (const char* faults :
       {"drop:0.02", "dup:0.02", "delay:0.05:300", "drop:0.01,dup:0.01",
        "drop@1:0:rdma_en2,drop@2:0:rdma_en2,drop@40:1:rdma_en2"})
    for (uint32_t frameBytes : {4096u, 16384u}) {
      SCOPED_TRACE(std::string(faults) + ", frames of " +
                   std::to_string(frameBytes));
      const RdmaLossCounts before = rdmaLossCounts();
      const EmuFaultCounts hit = emuFaultCounts();
      expectRingAllReduceCompletes({frameBytes, 32}, cycle++, faults, 12);
      if (HasFailure()) return;
      const RdmaLossCounts after = rdmaLossCounts();
      const EmuFaultCounts hitAfter = emuFaultCounts();
      if (hitAfter.dropped > hit.dropped) {
        EXPECT_GT(after.lost + after.probes, before.lost + before.probes);
        EXPECT_GT(after.resent, before.resent);
      }
      if (hitAfter.duplicated > hit.duplicated) {
        EXPECT_GT(after.duplicates, before.duplicates);
      }
    }
}

// A completion with an error status fails the operation at once, naming
// the wire, the status text and the frame.
TEST(RdmaRing, ACompletionErrorNamesTheWireTheStatusAndTheFrame) {
  EmuRing ring({4096, 32}, 300, "wc_error@3:0:rdma_en2");
  Connection& toMac1 = *ring.connections[0][0];
  try {
    for (int piece = 0; piece < 10; ++piece) {
      auto slot = toMac1.acquireSend(64);
      for (int spins = 0; slot.empty() && spins < 100000; ++spins)
        slot = toMac1.acquireSend(64);
      ASSERT_FALSE(slot.empty());
      toMac1.commitSend(64);
    }
    for (int spins = 0; spins < 100000; ++spins) toMac1.progress();
    ADD_FAILURE() << "the failed completion went unnoticed";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), mclRemoteError) << what;
    EXPECT_NE(what.find("rdma_en2->rdma_en3"), std::string::npos) << what;
    EXPECT_NE(what.find("general error"), std::string::npos) << what;
    EXPECT_NE(what.find("the send of piece 2"), std::string::npos) << what;
  }
}

// Every piece holds bytes; a data frame without any could never be read,
// and its connection would wait behind it until the timeout instead of
// failing at once.
TEST(RdmaRing, ADataFrameWithoutDataIsMalformed) {
  EmuRing ring({4096, 8}, 100);
  Connection& toMac1 = *ring.connections[0][0];
  Connection& fromMac0 = *ring.connections[1][0];
  ASSERT_FALSE(toMac1.acquireSend(64).empty());
  toMac1.commitSend(0);  // what no mcl sender does: a peer gone wrong
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(3);
  try {
    while (std::chrono::steady_clock::now() < deadline) {
      ASSERT_TRUE(fromMac0.peekRecv().empty());
      toMac1.progress();
    }
    ADD_FAILURE() << "the empty data frame was never refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclRemoteError) << e.what();
    EXPECT_NE(std::string(e.what()).find("without data"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace mcl::transport::rdma
