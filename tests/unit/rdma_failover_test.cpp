// A cable of a doubled pair lost mid-stream on the emulated fabric
// (tests/fixtures/rdma/pair2.json: mac0 rdma_en2 + rdma_en5 <-> mac1
// rdma_en3 + rdma_en6; MCL_EMU_FAULTS port_down): both ends give the wire
// up, and each way every piece arrives once, whole and in order, over the
// cable that remains. With one cable only, the connection fails naming it,
// or, given a standby (a TCP connection in a job; here an in-memory pipe
// with small slots, so that a frame's piece goes in several records), goes
// on over the standby with every piece once and in order.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <ratio>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "emu_rdma_options.h"
#include "fake_transport.h"
#include "transports/rdma/rdma_connection.h"
#include "transports/rdma/rdma_wires.h"

namespace mcl::transport::rdma {
namespace rdma_failover_test {

using Clock = std::chrono::steady_clock;

// Two Macs of `fabric`, their channel-0 connections each way.
struct Macs {
  RdmaWires mac0;
  RdmaWires mac1;
  // The standby's two ways (addStandby), outliving the connections.
  fake::Fifo standbyThere{{4, 1024}};
  fake::Fifo standbyBack{{4, 1024}};
  std::unique_ptr<Connection> toMac1;
  std::unique_ptr<Connection> toMac0;

  static RdmaOptions options(const std::string& fabric, int mac,
                             const std::string& faults) {
    // A fabric of its own (its shared memory's names) per test.
    RdmaOptions o =
        emuOptions(fabric, mac, "rf" + std::to_string(getpid()) + fabric);
    o.provider.emuFaults = faults;
    return o;
  }
  Macs(const std::string& fabric, const std::string& faults)
      : mac0(0, options(fabric, 0, faults)),
        mac1(1, options(fabric, 1, faults)) {
    connectTwoMacs(mac0, mac1);
    toMac1 = mac0.connect(1, 0);
    toMac0 = mac1.connect(0, 0);
  }
  void addStandby() {
    ASSERT_TRUE(toMac1->keepStandby(
        std::make_unique<fake::FakeConnection>(&standbyThere, &standbyBack)));
    ASSERT_TRUE(toMac0->keepStandby(
        std::make_unique<fake::FakeConnection>(&standbyBack, &standbyThere)));
  }
};

// Piece i: its own length and bytes, so that a piece lost, doubled, cut or
// taken out of order shows.
size_t pieceBytes(uint64_t i, size_t room) { return 1 + (i * 37) % room; }
std::byte pieceByte(uint64_t i, size_t j) {
  return static_cast<std::byte>((i * 131 + j * 7) & 0xff);
}

// One way of the stream: pieces written while the clock is before
// `sendUntil`, read and checked except while it is in [pauseFrom,
// pauseUntil), when the receiver only polls (its frames fill with pieces
// it holds and does not read).
struct Way {
  Connection& from;
  Connection& to;
  uint64_t sent = 0;
  uint64_t got = 0;
  std::string wrong;
  // Each piece's length as sent, and how much of the oldest was read: a
  // piece may come in parts (a standby's records).
  std::deque<size_t> lengths;
  size_t offset = 0;

  void step(Clock::time_point now, Clock::time_point sendUntil,
            Clock::time_point pauseFrom, Clock::time_point pauseUntil) {
    if (now < sendUntil) {
      std::span<std::byte> slot = from.acquireSend(1 << 20);
      if (!slot.empty()) {
        const size_t n = pieceBytes(sent, slot.size());
        for (size_t j = 0; j < n; ++j) slot[j] = pieceByte(sent, j);
        from.commitSend(n);
        lengths.push_back(n);
        ++sent;
      }
    }
    if (now >= pauseFrom && now < pauseUntil) {
      to.progress();
      return;
    }
    std::span<const std::byte> in = to.peekRecv();
    if (in.empty()) return;
    if (lengths.empty() || offset + in.size() > lengths.front()) {
      wrong = "piece " + std::to_string(got) + ": " +
              std::to_string(offset + in.size()) + " bytes, more than sent";
      return;
    }
    for (size_t j = 0; j < in.size() && wrong.empty(); ++j)
      if (in[j] != pieceByte(got, offset + j))
        wrong = "piece " + std::to_string(got) + " byte " +
                std::to_string(offset + j);
    to.releaseRecv(in.size());
    offset += in.size();
    if (offset < lengths.front()) return;
    lengths.pop_front();
    offset = 0;
    ++got;
  }
};

// When each way's reader only polls, not reading (ms from the start;
// from == until: never).
struct Pauses {
  int thereFrom = 0, thereUntil = 0, backFrom = 0, backUntil = 0;
};

// What a stream both ways did: the pieces each way, and when mac0 first
// counted a wire lost (ms from the start; -1: never), for people.
struct Streamed {
  uint64_t there = 0, back = 0;
  double lostAtMs = -1;
};

// Streams both ways until `untilMs`, then until every piece is in, every
// one checked; fails (with the counts) when that takes over 30 s.
::testing::AssertionResult streamBothWays(Macs& macs, int untilMs,
                                          Pauses p = {},
                                          Streamed* out = nullptr) {
  const auto start = Clock::now();
  const auto ms = [&](int n) { return start + std::chrono::milliseconds(n); };
  Way there{*macs.toMac1, *macs.toMac0, 0, 0, "", {}, 0};
  Way back{*macs.toMac0, *macs.toMac1, 0, 0, "", {}, 0};
  Streamed seen;
  while (there.got < there.sent || back.got < back.sent ||
         Clock::now() < ms(untilMs)) {
    const auto now = Clock::now();
    if (now > ms(30000))
      return ::testing::AssertionFailure()
             << "stalled: there " << there.got << " of " << there.sent
             << ", back " << back.got << " of " << back.sent;
    there.step(now, ms(untilMs), ms(p.thereFrom), ms(p.thereUntil));
    back.step(now, ms(untilMs), ms(p.backFrom), ms(p.backUntil));
    if (!there.wrong.empty() || !back.wrong.empty())
      return ::testing::AssertionFailure() << there.wrong << back.wrong;
    if (seen.lostAtMs < 0 && macs.mac0.lossCounts().wiresLost > 0)
      seen.lostAtMs =
          std::chrono::duration<double, std::milli>(now - start).count();
  }
  seen.there = there.sent;
  seen.back = back.sent;
  if (out != nullptr) *out = seen;
  return ::testing::AssertionSuccess();
}

TEST(RdmaFailover, ACableOfAPairLostMidStreamLosesNoPieceEitherWay) {
  // rdma_en6 (mac1's end of the second cable) goes down 60 ms after the
  // fabric starts; both ends see its port down. There: read throughout
  // the loss, so that pieces are in flight on the cable when it goes
  // (sent again). Back: not read from just after it, so that the frames of
  // the cable left fill with newer pieces while older ones must come again
  // (the receiver's copies).
  Macs macs("pair2", "port_down:1:rdma_en6@60");
  Streamed s;
  ASSERT_TRUE(streamBothWays(macs, 200, {20, 50, 61, 100}, &s));
  EXPECT_GT(s.there, 100u);
  EXPECT_GT(s.back, 100u);
  // Each end gave the wire up (its own port, or the other's word).
  const RdmaLossCounts at0 = macs.mac0.lossCounts();
  const RdmaLossCounts at1 = macs.mac1.lossCounts();
  EXPECT_GE(at0.wiresLost, 1u);
  EXPECT_GE(at1.wiresLost, 1u);
  // Pieces sent on the cable after it went and before its end noticed.
  EXPECT_GT(at0.piecesMoved + at1.piecesMoved, 0u);
  std::printf(
      "given up %.1f ms after the start (the port went down at 60); pieces "
      "there %llu, back %llu; moved %llu + %llu\n",
      s.lostAtMs, static_cast<unsigned long long>(s.there),
      static_cast<unsigned long long>(s.back),
      static_cast<unsigned long long>(at0.piecesMoved),
      static_cast<unsigned long long>(at1.piecesMoved));
  EXPECT_TRUE(macs.toMac1->peerAlive());
  EXPECT_TRUE(macs.toMac0->peerAlive());
}

TEST(RdmaFailover, TwoCablesOfThreeLostOneAfterTheOtherWhileReadersPause) {
  // tests/fixtures/rdma/pair3.json: three cables. The second goes at 60 ms,
  // the third at 120 ms, while each way's reader stops reading for a while
  // (its window full of pieces held, copied out since the first loss): the
  // second loss must find every frame of the cable left free to take what
  // comes again.
  Macs macs("pair3", "port_down:1:rdma_en6@60,port_down:0:rdma_en7@120");
  ASSERT_TRUE(streamBothWays(macs, 250, {90, 160, 40, 140}));
  EXPECT_GE(macs.mac0.lossCounts().wiresLost, 2u);
  EXPECT_GE(macs.mac1.lossCounts().wiresLost, 2u);
}

TEST(RdmaFailover, ACableThatCarriesNothingWhileTheOtherAnswersIsGivenUp) {
  // rdma_en5 <-> rdma_en6 loses every frame from 60 ms on, its ports up:
  // only silence shows it. Both ways keep streaming; the pieces it swallowed
  // come again over the other cable.
  Macs macs("pair2", "silent:1:rdma_en6@60");
  Streamed s;
  ASSERT_TRUE(streamBothWays(macs, 1500, {}, &s));
  std::printf("given up %.1f ms after the start (silent from 60)\n",
              s.lostAtMs);
  EXPECT_GE(macs.mac0.lossCounts().wiresLost, 1u);
  EXPECT_GE(macs.mac1.lossCounts().wiresLost, 1u);
  EXPECT_GT(macs.mac0.lossCounts().piecesMoved, 0u);
  EXPECT_GT(macs.mac1.lossCounts().piecesMoved, 0u);
}

TEST(RdmaFailover, ASendThatFailsOnOneEndGivesTheCableUpAtBoth) {
  // Mac 0's 300th frame out of rdma_en2 completes with an error: only mac0
  // sees it; mac1 learns it from the lost bits mac0's frames carry.
  Macs macs("pair2", "wc_error@300:0:rdma_en2");
  EXPECT_TRUE(streamBothWays(macs, 300));
  EXPECT_GE(macs.mac0.lossCounts().wiresLost, 1u);
  EXPECT_GE(macs.mac1.lossCounts().wiresLost, 1u);
}

TEST(RdmaFailover, TwoEndsThatGiveUpDifferentCablesFailNamingThem) {
  // Each end loses the other cable at about the same time: no cable is
  // left that both use. The connection fails saying so (or, where one end
  // heard of the other's loss first, on its own last cable's error), long
  // before any timeout.
  Macs macs("pair2", "wc_error@300:0:rdma_en2,wc_error@300:1:rdma_en6");
  try {
    streamBothWays(macs, 10000);
    ADD_FAILURE() << "two cables lost, none left, and no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_TRUE(what.find("no cable is left that both ends use") !=
                    std::string::npos ||
                what.find("completed with an error") != std::string::npos)
        << what;
    EXPECT_NE(what.find("rdma_en"), std::string::npos) << what;
  }
}

TEST(RdmaFailover, TheOnlyCableLostFailsNamingIt) {
  Macs macs("pair", "port_down:1:rdma_en3@30");
  const auto start = Clock::now();
  Way there{*macs.toMac1, *macs.toMac0, 0, 0, "", {}, 0};
  try {
    while (Clock::now() < start + std::chrono::seconds(10)) {
      there.step(Clock::now(), start + std::chrono::seconds(10), start, start);
      if (!macs.toMac1->peerAlive()) break;
    }
    ADD_FAILURE() << "the lost cable went unnoticed";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rdma_en2->rdma_en3"), std::string::npos) << what;
    EXPECT_NE(what.find("went down"), std::string::npos) << what;
  }
}

TEST(RdmaFailover, TheOnlyCableLostGoesOnOverTheStandby) {
  // rdma_en3 (mac1's end of the one cable) goes down at 60 ms while both
  // ways stream, the back way's reader paused across it (its frames hold
  // pieces it has not read, which it reads before the standby's).
  Macs macs("pair", "port_down:1:rdma_en3@60");
  macs.addStandby();
  Streamed s;
  ASSERT_TRUE(streamBothWays(macs, 300, {20, 50, 40, 100}, &s));
  std::printf(
      "moved %.1f ms after the start (the port went down at 60); pieces "
      "there %llu, back %llu; moved %llu + %llu\n",
      s.lostAtMs, static_cast<unsigned long long>(s.there),
      static_cast<unsigned long long>(s.back),
      static_cast<unsigned long long>(macs.mac0.lossCounts().piecesMoved),
      static_cast<unsigned long long>(macs.mac1.lossCounts().piecesMoved));
  EXPECT_GT(s.there, 100u);
  EXPECT_GT(s.back, 100u);
  EXPECT_GE(macs.mac0.lossCounts().wiresLost, 1u);
  EXPECT_GE(macs.mac1.lossCounts().wiresLost, 1u);
  // Both ends carry on over the standby (their links say so).
  EXPECT_NE(std::string(macs.toMac0->linkName()).find("standby of"),
            std::string::npos)
      << macs.toMac0->linkName();
  EXPECT_NE(std::string(macs.toMac1->linkName()).find("standby of"),
            std::string::npos)
      << macs.toMac1->linkName();
  EXPECT_TRUE(macs.toMac1->peerAlive());
  EXPECT_TRUE(macs.toMac0->peerAlive());
}

TEST(RdmaFailover, BothCablesLostOneAfterTheOtherGoOnOverTheStandby) {
  // The second cable first (its pieces move to the first), then the first:
  // what either still held goes over the standby, oldest first.
  Macs macs("pair2", "port_down:1:rdma_en6@60,port_down:0:rdma_en2@120");
  macs.addStandby();
  ASSERT_TRUE(streamBothWays(macs, 300, {90, 160, 40, 140}));
  EXPECT_GE(macs.mac0.lossCounts().wiresLost, 2u);
  EXPECT_GE(macs.mac1.lossCounts().wiresLost, 2u);
}

TEST(RdmaFailover, TwoEndsThatGiveUpDifferentCablesGoOnOverTheStandby) {
  // As TwoEndsThatGiveUpDifferentCablesFailNamingThem, but with a standby:
  // no cable is left that both ends use, and that is where it takes over.
  Macs macs("pair2", "wc_error@300:0:rdma_en2,wc_error@300:1:rdma_en6");
  macs.addStandby();
  ASSERT_TRUE(streamBothWays(macs, 400));
  EXPECT_NE(std::string(macs.toMac1->linkName()).find("standby of"),
            std::string::npos);
  EXPECT_NE(std::string(macs.toMac0->linkName()).find("standby of"),
            std::string::npos);
}

TEST(RdmaFailover, ACableLostAtOneEndOnlyMovesBothToTheStandby) {
  // Mac 0's 300th frame fails at its end only; mac1's port stays up and it
  // hears of the move from mac0's notice on the standby.
  Macs macs("pair", "wc_error@300:0:rdma_en2");
  macs.addStandby();
  Streamed s;
  ASSERT_TRUE(streamBothWays(macs, 400, {}, &s));
  EXPECT_GE(macs.mac0.lossCounts().wiresLost, 1u);
  EXPECT_GE(macs.mac1.lossCounts().wiresLost, 1u);
  EXPECT_GT(s.back, 300u);
}

}  // namespace rdma_failover_test
}  // namespace mcl::transport::rdma
