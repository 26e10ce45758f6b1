// The queue-pair addresses ranks swap at init (outside input): they come
// back as sent, and a LID past 16 bits or bytes past the entries are
// refused rather than cut or ignored.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "base/error.h"
#include "transports/rdma/rdma_wires.h"

namespace mcl::transport::rdma {
namespace {

WireAddress sample() {
  WireAddress w;
  w.target = 3;
  w.channel = 1;
  w.index = 2;
  w.address.gid[15] = 7;
  w.address.qpn = 0x1234;
  w.address.psn = 99;
  w.address.lid = 0xBEEF;
  w.address.mtu = 4096;
  return w;
}

TEST(RdmaAddresses, RoundTrip) {
  auto back = decodeAddresses(encodeAddresses({sample(), sample()}));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].target, 3u);
  EXPECT_EQ(back[1].address.lid, 0xBEEF);
  EXPECT_EQ(back[1].address.gid, sample().address.gid);
}

TEST(RdmaAddresses, TrailingBytesAreRefused) {
  auto bytes = encodeAddresses({sample()});
  bytes.push_back(0);
  EXPECT_THROW(decodeAddresses(bytes), Error);
}

TEST(RdmaAddresses, ALidPastSixteenBitsIsRefused) {
  auto bytes = encodeAddresses({sample()});
  // The LID is the 11th u32 of the entry, after the count: bytes 4+36.
  const uint32_t wide = 0x1BEEF;
  memcpy(bytes.data() + 4 + 36, &wide, sizeof(wide));
  try {
    decodeAddresses(bytes);
    ADD_FAILURE() << "accepted a 17-bit LID";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclRemoteError);
    EXPECT_NE(std::string(e.what()).find("LID"), std::string::npos);
  }
}

}  // namespace
}  // namespace mcl::transport::rdma
