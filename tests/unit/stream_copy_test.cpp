// streamCopy copies exactly what memcpy copies, at every alignment of
// either end and every length around its 64-byte blocks and 16-byte head.
#include "algorithms/kernels/stream_copy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mcl::kernels {
namespace {

TEST(StreamCopyTest, MatchesMemcpyAtEveryAlignmentAndLength) {
  std::vector<uint8_t> src(4096 + 64), dst(4096 + 64);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 131 + 7);
  for (size_t srcOffset = 0; srcOffset < 17; ++srcOffset)
    for (size_t dstOffset = 0; dstOffset < 17; ++dstOffset)
      for (size_t len :
           {0, 1, 15, 16, 63, 64, 65, 79, 80, 127, 128, 129, 300, 1000, 4000}) {
        std::fill(dst.begin(), dst.end(), 0xEE);
        streamCopy(dst.data() + dstOffset, src.data() + srcOffset, len);
        for (size_t i = 0; i < dst.size(); ++i) {
          const bool inside = i >= dstOffset && i < dstOffset + len;
          const uint8_t want = inside ? src[i - dstOffset + srcOffset] : 0xEE;
          ASSERT_EQ(dst[i], want) << "byte " << i << ", src+" << srcOffset
                                  << " dst+" << dstOffset << " len " << len;
        }
      }
}

TEST(StreamCopyTest, LargeCopyIsExact) {
  const size_t len = (size_t{1} << 20) + 13;
  std::vector<uint8_t> src(len + 3), dst(len + 3, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i ^ (i >> 8));
  streamCopy(dst.data() + 3, src.data() + 1, len);
  for (size_t i = 0; i < len; ++i) ASSERT_EQ(dst[i + 3], src[i + 1]) << i;
  EXPECT_EQ(dst[0], 0);
}

}  // namespace
}  // namespace mcl::kernels
