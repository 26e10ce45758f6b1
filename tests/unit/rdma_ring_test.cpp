// A ring all-reduce over real RDMA connections on the emulated fabric: three
// Macs of a ring of cables in this process, their lanes run together in one
// thread, with rounds sized from the connections' capacity the way
// comm_init.cpp sizes them. Each round fills the windows of the ring; if
// that capacity counted a frame the sender cannot use (the credit kept for
// credit-only frames) or a step that does not end on a frame boundary, the
// ring would wait on itself: the test would time out. Also how a
// connection takes a malformed frame.
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
#include "transports/rdma/rdma_wires.h"

namespace mcl::transport::rdma {
namespace {

constexpr int kMacs = 3;

struct EmuRing {
  std::vector<std::unique_ptr<RdmaWires>> devices;
  std::vector<std::vector<std::unique_ptr<Connection>>> connections;
  std::vector<AlgoContext> contexts;
  std::vector<CallScratch> scratch;

  EmuRing(const FrameShape& shape, int cycle)
      : contexts(kMacs), scratch(kMacs) {
    const std::string ns =
        "rr" + std::to_string(getpid()) + "-" + std::to_string(cycle);
    for (int mac = 0; mac < kMacs; ++mac) {
      RdmaOptions o = emuOptions("ring3", mac, ns);
      o.shape = shape;
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
      c.waker = &devices[size_t(mac)]->waker();
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

void expectRingAllReduceCompletes(const FrameShape& shape, int cycle) {
  EmuRing ring(shape, cycle);
  // Several rounds, and a count that leaves a partial last frame per step.
  const size_t count = 3 * ring.contexts[0].maxStepBytes + 1001;
  std::vector<std::vector<int32_t>> in(kMacs), out(kMacs);
  std::vector<std::vector<Step>> steps(kMacs);
  std::vector<Lane> lanes(kMacs);
  for (int mac = 0; mac < kMacs; ++mac) {
    in[size_t(mac)].assign(count, mac + 1);
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
    for (size_t i = 0; i < count; i += 997)
      ASSERT_EQ(out[size_t(mac)][i], 6) << "Mac " << mac << " element " << i;
}

TEST(RdmaRing, RoundsSizedFromTheCapacityNeverDeadlock) {
  int cycle = 0;
  for (int depth : {8, 9, 16, 32})
    for (uint32_t frameBytes : {128u, 4096u}) {
      SCOPED_TRACE("depth " + std::to_string(depth) + ", frames of " +
                   std::to_string(frameBytes));
      expectRingAllReduceCompletes({frameBytes, depth}, cycle++);
      if (HasFailure()) return;
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
