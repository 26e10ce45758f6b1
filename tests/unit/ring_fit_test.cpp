// fitRings: rings as asked where they fit, smaller ones (never below the
// floor) where they do not, and "does not fit" below the floor; byte
// counts as messages print them.
#include <gtest/gtest.h>

#include <cstdint>

#include "base/byte_text.h"
#include "transports/shm/ring_fit.h"

namespace mcl::transport::shm {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

ShmOptions defaults() { return ShmOptions{}; }  // 8 slots of 64 KiB

TEST(RingFit, AsAskedWhereThereIsRoomOrNoBound) {
  RingFit fit = fitRings(defaults(), 4, UINT64_MAX);
  EXPECT_TRUE(fit.fits);
  EXPECT_FALSE(fit.shrunk);
  EXPECT_EQ(fit.options.slots, 8u);
  EXPECT_EQ(fit.options.slotBytes, 65536u);
  // 4 ranks x 8 rings x 8 slots of 64 KiB: a little over 16 MiB.
  EXPECT_GT(fit.hostBytes, 16 * kMiB);
  EXPECT_LT(fit.hostBytes, 17 * kMiB);
  fit = fitRings(defaults(), 4, 32 * kMiB);  // 24 MiB for the rings
  EXPECT_TRUE(fit.fits);
  EXPECT_FALSE(fit.shrunk);
}

TEST(RingFit, ShrinksSlotsFirstThenTheirSizeWithinThreeQuarters) {
  // Docker's 64 MiB under 16 ranks: 256 MiB wanted, 48 MiB allowed.
  RingFit fit = fitRings(defaults(), 16, 64 * kMiB);
  EXPECT_TRUE(fit.fits);
  EXPECT_TRUE(fit.shrunk);
  EXPECT_LE(fit.hostBytes, 48 * kMiB);
  EXPECT_EQ(fit.options.slots, 4u);
  EXPECT_EQ(fit.options.slotBytes, 16384u);
  EXPECT_EQ(fit.askedHostBytes, fitRings(defaults(), 16, UINT64_MAX).hostBytes);
  // 8 ranks want 64.1 MiB: half the slots are enough.
  fit = fitRings(defaults(), 8, 64 * kMiB);
  EXPECT_EQ(fit.options.slots, 4u);
  EXPECT_EQ(fit.options.slotBytes, 65536u);
}

TEST(RingFit, EveryRoomGivesTheLargestRingsThatFitOrNone) {
  // From 1 KiB of room to 1 GiB: what fits is within the budget, and one
  // step larger (the previous room's answer) never is smaller.
  uint64_t previous = 0;
  for (uint64_t room = 1024; room <= 1024 * kMiB; room = room * 5 / 4) {
    RingFit fit = fitRings(defaults(), 8, room);
    if (!fit.fits) {
      EXPECT_GT(fit.floorHostBytes, room / 4 * 3) << room;
      EXPECT_EQ(fit.options.slots, kFloorSlots);
      EXPECT_EQ(fit.options.slotBytes, kFloorSlotBytes);
      continue;
    }
    EXPECT_LE(fit.hostBytes, room / 4 * 3) << room;
    EXPECT_GE(fit.hostBytes, previous) << room;
    EXPECT_GE(fit.options.slots, kFloorSlots);
    EXPECT_GE(fit.options.slotBytes, kFloorSlotBytes);
    EXPECT_EQ(fit.options.slotBytes % 64, 0u);
    previous = fit.hostBytes;
  }
  EXPECT_GT(previous, 0u);
}

TEST(RingFit, SmallerThanTheFloorAsAskedIsKept) {
  ShmOptions asked;
  asked.slots = 2;
  asked.slotBytes = 128;
  RingFit fit = fitRings(asked, 2, 64 * 1024);
  EXPECT_TRUE(fit.fits);
  EXPECT_FALSE(fit.shrunk);
  EXPECT_EQ(fit.options.slotBytes, 128u);
  fit = fitRings(asked, 64, 4096);
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.options.slotBytes, 128u);  // the floor is what was asked
}

TEST(ByteText, PowersOf1024WithOneDecimal) {
  EXPECT_EQ(bytesText(0), "0 B");
  EXPECT_EQ(bytesText(1023), "1023 B");
  EXPECT_EQ(bytesText(1024), "1.0 KiB");
  EXPECT_EQ(bytesText(256 * 1024), "256.0 KiB");
  EXPECT_EQ(bytesText(64 * kMiB), "64.0 MiB");
  EXPECT_EQ(bytesText(3 * kMiB / 2), "1.5 MiB");
  EXPECT_EQ(bytesText(uint64_t{5} << 40), "5.0 TiB");
}

}  // namespace
}  // namespace mcl::transport::shm
