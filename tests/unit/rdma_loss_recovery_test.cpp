// A lost frame of any kind is recovered, whatever its sender does next: a
// ping-pong of one-byte messages between two Macs of the emulated fabric,
// each rank in a thread of its own, run again and again with frames
// dropped at fixed places (drop@N): each frame of either end in turn, and
// one of each end together (a piece and the probe, answer or resend that
// recovers it). The rank that sends the last message then waits elsewhere
// and touches none of its connections, as mcl-perf qualify's rank does
// when it goes on to the job's communicator over shared memory: only the
// connection set's keeper answers the peer's probes and sends again what
// was lost, and the peer still gets the message.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "emu_rdma_options.h"
#include "transports/rdma/rdma_connection.h"
#include "transports/rdma/rdma_wires.h"

namespace mcl::transport::rdma {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kRoundTrips = 3;
// A lost frame comes again within milliseconds (a probe after 1 ms, then
// at doubling intervals): this bound only tells a message that never comes
// from one that is late on a loaded machine.
constexpr auto kRunBound = std::chrono::seconds(30);

// Two Macs on one cable (fixture "pair": mac0 rdma_en2 <-> mac1 rdma_en3),
// their channel-0 connections, and each set kept serviced as a
// communicator's is.
struct CablePair {
  RdmaWires mac0;
  RdmaWires mac1;
  std::unique_ptr<Connection> toMac1;
  std::unique_ptr<Connection> toMac0;

  static RdmaOptions options(int mac, const std::string& ns, int depth,
                             const std::string& faults) {
    RdmaOptions o = emuOptions("pair", mac, ns);
    o.shape.depth = depth;
    o.provider.emuFaults = faults;
    return o;
  }
  CablePair(const std::string& ns, int depth, const std::string& faults)
      : mac0(0, options(0, ns, depth, faults)),
        mac1(1, options(1, ns, depth, faults)) {
    connectTwoMacs(mac0, mac1);
    toMac1 = mac0.connect(1, 0);
    toMac0 = mac1.connect(0, 0);
    mac0.keepServiced();
    mac1.keepServiced();
  }
};

// One rank's operations: each holds the rank's connections while it runs
// (as a communicator's turn does) and gives up at the run's deadline.
class Rank {
 public:
  Rank(RdmaWires& wires, Connection& link, Clock::time_point deadline)
      : wires_(wires), link_(link), deadline_(deadline) {}

  // Hands one byte over, then waits until its SEND completed (what
  // mclSend waits for: not for the peer to acknowledge it).
  bool send(uint8_t value) {
    Use use(wires_);
    std::span<std::byte> slot = link_.acquireSend(1);
    while (slot.empty()) {
      if (Clock::now() > deadline_) return false;
      slot = link_.acquireSend(1);
    }
    slot[0] = std::byte{value};
    link_.commitSend(1);
    while (!link_.drained()) {
      if (Clock::now() > deadline_) return false;
      link_.progress();
    }
    return true;
  }

  // Waits for one byte; false at the deadline.
  bool receive(uint8_t* value) {
    Use use(wires_);
    std::span<const std::byte> in = link_.peekRecv();
    while (in.empty()) {
      if (Clock::now() > deadline_) return false;
      in = link_.peekRecv();
    }
    *value = static_cast<uint8_t>(in[0]);
    link_.releaseRecv(1);
    return true;
  }

 private:
  struct Use {
    explicit Use(RdmaWires& w) : wires(w) { wires.beginUse(); }
    ~Use() { wires.endUse(); }
    RdmaWires& wires;
  };
  RdmaWires& wires_;
  Connection& link_;
  Clock::time_point deadline_;
};

// What went wrong in a run, or "".
std::string pingPong(int depth, const std::string& faults, int run) {
  CablePair pair("lr" + std::to_string(getpid()) + "-" + std::to_string(run),
                 depth, faults);
  const Clock::time_point deadline = Clock::now() + kRunBound;
  std::string failures[2];
  std::atomic<bool> mac1Done{false};
  auto guarded = [&](int mac, auto body) {
    return [&failures, mac, body] {
      try {
        failures[mac] = body();
      } catch (const std::exception& e) {
        failures[mac] = e.what();
      }
    };
  };
  std::thread mac0(guarded(0, [&]() -> std::string {
    Rank me(pair.mac0, *pair.toMac1, deadline);
    for (int i = 0; i < kRoundTrips; ++i) {
      uint8_t reply = 0;
      if (!me.send(uint8_t(2 * i))) return "ping " + std::to_string(i);
      if (!me.receive(&reply)) return "no reply " + std::to_string(i);
      if (reply != uint8_t(2 * i + 1)) return "a wrong reply";
    }
    if (!me.send(0xee)) return "the last message";
    // Waits elsewhere, its connections left alone, until the peer is done.
    while (!mac1Done.load() && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return "";
  }));
  std::thread mac1(guarded(1, [&]() -> std::string {
    Rank me(pair.mac1, *pair.toMac0, deadline);
    std::string failure;
    for (int i = 0; i < kRoundTrips && failure.empty(); ++i) {
      uint8_t ping = 0;
      if (!me.receive(&ping))
        failure = "no ping " + std::to_string(i);
      else if (ping != uint8_t(2 * i))
        failure = "a wrong ping";
      else if (!me.send(uint8_t(2 * i + 1)))
        failure = "reply " + std::to_string(i);
    }
    uint8_t last = 0;
    if (failure.empty() && !me.receive(&last))
      failure = "the last message never came";
    else if (failure.empty() && last != 0xee)
      failure = "a wrong last message";
    mac1Done = true;
    return failure;
  }));
  mac0.join();
  mac1.join();
  std::string out;
  for (int mac = 0; mac < 2; ++mac)
    if (!failures[mac].empty())
      out += "Mac " + std::to_string(mac) + ": " + failures[mac] + "; ";
  return out;
}

TEST(RdmaLossRecovery, EveryFrameOfAPingPongLostInTurnIsRecovered) {
  int run = 0;
  for (int depth : {8, 32}) {
    // Each frame of either end alone: the pings, the replies, and the
    // credits, probes, answers and resends that follow a loss.
    for (const char* end : {"0:rdma_en2", "1:rdma_en3"})
      for (int n = 1; n <= 2 * kRoundTrips + 4; ++n) {
        const std::string faults = "drop@" + std::to_string(n) + ":" + end;
        EXPECT_EQ(pingPong(depth, faults, run++), "")
            << faults << ", depth " << depth;
      }
    // A frame of each end: a piece and what would recover it.
    for (int n0 = 1; n0 <= kRoundTrips + 3; ++n0)
      for (int n1 = 1; n1 <= kRoundTrips + 3; ++n1) {
        const std::string faults = "drop@" + std::to_string(n0) +
                                   ":0:rdma_en2,drop@" + std::to_string(n1) +
                                   ":1:rdma_en3";
        EXPECT_EQ(pingPong(depth, faults, run++), "")
            << faults << ", depth " << depth;
      }
  }
}

// The last message's frame lost and its sender gone elsewhere: the peer
// still gets it, from the keeper, and the loss is counted.
TEST(RdmaLossRecovery, TheLastMessageLostWhileItsSenderWaitsElsewhere) {
  const RdmaLossCounts before = rdmaLossCounts();
  // mac0's frames: ping 0, 1, 2, then the last message.
  EXPECT_EQ(pingPong(32, "drop@4:0:rdma_en2", 1000), "");
  const RdmaLossCounts after = rdmaLossCounts();
  EXPECT_GT(after.lost, before.lost);
}

}  // namespace
}  // namespace mcl::transport::rdma
