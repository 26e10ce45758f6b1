// The shm producer's choice between plain and non-temporal stores: it
// follows the measured costs, wants a clear advantage before streaming,
// keeps trying the other kind, and shrugs off one interrupted write.
#include "transports/shm/store_choice.h"

#include <gtest/gtest.h>
#include <chrono>
#include <cstddef>

#include "base/error.h"

namespace mcl::transport::shm {
namespace {

using std::chrono::nanoseconds;
constexpr size_t kPiece = 64 * 1024;

// Feeds `writes` decisions with the given costs (ns per piece); returns how
// many of them streamed.
int streamedOf(StoreChoice& c, int writes, long plainNs, long streamNs) {
  int streamed = 0;
  for (int i = 0; i < writes; ++i) {
    const bool stream = c.streamNext();
    streamed += stream;
    c.record(stream, kPiece, nanoseconds(stream ? streamNs : plainNs));
  }
  return streamed;
}

TEST(StoreChoiceTest, SmallPiecesAndPlainModeAreNeverChosen) {
  StoreChoice automatic;
  EXPECT_FALSE(automatic.chooses(StoreChoice::kMinBytes - 64));
  // Auto chooses only where a non-temporal copy exists (x86-64); elsewhere
  // (arm64: Apple silicon) the streamed copy is memcpy, so it never does.
  EXPECT_EQ(automatic.chooses(StoreChoice::kMinBytes),
            StoreChoice::kHaveStreamingStores);
  StoreChoice streaming(RingStores::Streaming);
  EXPECT_FALSE(streaming.chooses(StoreChoice::kMinBytes - 64));
  EXPECT_TRUE(streaming.chooses(StoreChoice::kMinBytes));
  StoreChoice plain(RingStores::Plain);
  EXPECT_FALSE(plain.chooses(kPiece));
}

TEST(StoreChoiceTest, StreamingModeAlwaysStreams) {
  StoreChoice c(RingStores::Streaming);
  EXPECT_EQ(streamedOf(c, 100, 1000, 5000), 100);
}

TEST(StoreChoiceTest, MeasuresPlainThenStreamingFirst) {
  StoreChoice c;
  // Each kind's first write warms up (page faults) and does not count.
  EXPECT_FALSE(c.streamNext());
  c.record(false, kPiece, nanoseconds(1000));
  EXPECT_FALSE(c.streamNext());
  c.record(false, kPiece, nanoseconds(1000));
  EXPECT_TRUE(c.streamNext());
}

TEST(StoreChoiceTest, AFirstWriteThatPaidPageFaultsIsNotTheEstimate) {
  StoreChoice c;  // far: streaming is cheaper ...
  c.record(false, kPiece, nanoseconds(6000));
  c.record(false, kPiece, nanoseconds(6000));
  // ... but its first write faulted in fresh pages: 1000x.
  c.record(true, kPiece, nanoseconds(1800 * 1000));
  EXPECT_GE(streamedOf(c, 64, 6000, 1800), 64 - 64 / 32 - 2);
}

TEST(StoreChoiceTest, AClockThatDidNotTickDoesNotWinForever) {
  StoreChoice c;
  streamedOf(c, 4, 2000, 3000);
  c.record(true, kPiece, nanoseconds(0));
  // Streaming costs 1.5x from now on: a zero once must not keep it.
  streamedOf(c, 320, 2000, 3000);
  EXPECT_LE(streamedOf(c, 320, 2000, 3000), 320 / 32 + 1);
}

TEST(StoreChoiceTest, FarCoresStreamExceptWhenExploring) {
  StoreChoice c;  // far apart: streaming costs 0.3 of plain
  const int streamed = streamedOf(c, 640, 6000, 1800);
  // All but the first plain write and one in 32.
  EXPECT_GE(streamed, 640 - 1 - 640 / 32 - 1);
  EXPECT_LE(streamed, 640 - 640 / 32 + 1);
}

TEST(StoreChoiceTest, NearCoresStayPlainExceptWhenExploring) {
  StoreChoice c;  // near: streaming costs 1.5x
  const int streamed = streamedOf(c, 640, 2000, 3000);
  EXPECT_LE(streamed, 640 / 32 + 2);
  EXPECT_GE(streamed, 640 / 32 - 1);
}

TEST(StoreChoiceTest, AModestAdvantageIsNotEnoughToStream) {
  // 0.8x for the producer does not pay for the consumer reading memory.
  StoreChoice c;
  EXPECT_LE(streamedOf(c, 640, 2000, 1600), 640 / 32 + 2);
}

TEST(StoreChoiceTest, FollowsTheCoresWhenTheyMove) {
  StoreChoice c;
  streamedOf(c, 320, 2000, 3000);  // near
  // Far from now on: exploring finds streaming cheaper within a few
  // rounds of 32 writes.
  streamedOf(c, 320, 6000, 1800);
  EXPECT_GE(streamedOf(c, 320, 6000, 1800), 320 - 320 / 32 - 1);
  // And back.
  streamedOf(c, 320, 2000, 3000);
  EXPECT_LE(streamedOf(c, 320, 2000, 3000), 320 / 32 + 1);
}

TEST(StoreChoiceTest, OneInterruptedWriteDoesNotFlipTheChoice) {
  StoreChoice c;
  streamedOf(c, 320, 6000, 1800);  // far: streaming
  // A streamed write the scheduler cut in two: 1000x its usual cost.
  c.record(true, kPiece, nanoseconds(1800 * 1000));
  EXPECT_GE(streamedOf(c, 64, 6000, 1800), 64 - 64 / 32 - 1);
}

TEST(StoreChoiceTest, ModeNames) {
  EXPECT_EQ(ringStoresNamed("auto"), RingStores::Auto);
  EXPECT_EQ(ringStoresNamed("plain"), RingStores::Plain);
  EXPECT_EQ(ringStoresNamed("stream"), RingStores::Streaming);
  try {
    ringStoresNamed("fast");
    FAIL() << "accepted 'fast'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("MCL_SHM_RING_STORES"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace mcl::transport::shm
