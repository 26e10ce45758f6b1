// Tests for the check a rank makes of a local peer's shared-memory segment
// before it uses any ring in it (transports/shm/shm_segments.h): what the
// peer wrote in the header is outside input, and every ring it describes
// must lie inside the bytes mapped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "transports/shm/shm_layout.h"
#include "transports/shm/shm_segments.h"

namespace mcl::transport::shm {
namespace {

// `size` bytes, aligned as a mapping is, whose header says the given shape.
struct Segment {
  struct alignas(kCacheLine) Line {
    std::byte bytes[kCacheLine];
  };
  std::vector<Line> lines;
  size_t size;
  SegmentHeader* header;

  Segment(size_t bytes, uint32_t rings, uint32_t slots, uint32_t slotBytes)
      : lines((std::max(bytes, sizeof(SegmentHeader)) + kCacheLine - 1) /
              kCacheLine),
        size(bytes),
        header(new (lines.data()) SegmentHeader{}) {
    header->magic = kSegmentMagic;
    header->rings = rings;
    header->slots = slots;
    header->slotBytes = slotBytes;
    header->ringStride = ringBytes(slots, slotBytes);
  }
  bool valid(uint32_t rings) const {
    return segmentLayoutValid(lines.data(), size, rings);
  }
};

TEST(ShmSegmentTest, TheLayoutThisBuildMakesIsValid) {
  Segment s(segmentBytes(4, 8, 1024), 4, 8, 1024);
  EXPECT_TRUE(s.valid(4));
  EXPECT_FALSE(s.valid(2)) << "another number of local ranks";
}

TEST(ShmSegmentTest, ASegmentTooSmallForItsRingsIsRefused) {
  Segment s(segmentBytes(4, 8, 1024) - 1, 4, 8, 1024);
  EXPECT_FALSE(s.valid(4));
  Segment headerOnly(sizeof(SegmentHeader) - 1, 4, 8, 1024);
  EXPECT_FALSE(headerOnly.valid(4));
}

TEST(ShmSegmentTest, AForeignHeaderIsRefused) {
  Segment magic(segmentBytes(2, 1, 64), 2, 1, 64);
  magic.header->magic = 1;
  EXPECT_FALSE(magic.valid(2));
  Segment stride(segmentBytes(2, 1, 64), 2, 1, 64);
  stride.header->ringStride = 64;
  EXPECT_FALSE(stride.valid(2));
  Segment unaligned(segmentBytes(2, 1, 100), 2, 1, 100);
  EXPECT_FALSE(unaligned.valid(2));
}

// 2^30 slots of 4 GiB - 64 bytes make rings of 2^62 bytes and their
// control; the total of four wraps around 64 bits to the header and four
// controls: a segment of that size passed for them, and its second ring
// lay 2^62 bytes away.
TEST(ShmSegmentTest, RingsWhoseTotalWrapsAroundAreRefused) {
  const uint32_t slots = 1u << 30;
  const uint32_t slotBytes = 0xFFFFFFC0u;
  const size_t wrapped = sizeof(SegmentHeader) + 4 * sizeof(RingControl);
  ASSERT_EQ(segmentBytes(4, slots, slotBytes), wrapped);
  Segment s(wrapped, 4, slots, slotBytes);
  EXPECT_FALSE(s.valid(4));
}

}  // namespace
}  // namespace mcl::transport::shm
