// The connector's verdict on a pair's links (tcp_handshake.h): which links
// the pair uses once init has tried them. It opens only with the socket's
// keys, as that direction's second sealed message, for the same number of
// links; anything altered on the way is refused.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/sealed_channel.h"
#include "base/session_keys.h"
#include "base/wire.h"
#include "transports/tcp/tcp_handshake.h"

namespace mcl::transport::tcp {
namespace {

// The connector's keys and the acceptor's: one's send is the other's
// receive.
struct KeyPair {
  SessionKeys connector;
  SessionKeys acceptor;
};

KeyPair keyPair(uint8_t seed) {
  KeyPair k;
  k.connector.send.fill(seed);
  k.connector.receive.fill(uint8_t(seed + 1));
  k.acceptor.send = k.connector.receive;
  k.acceptor.receive = k.connector.send;
  return k;
}

TEST(TcpLinkVerdict, OpensWithTheSocketsKeys) {
  const KeyPair k = keyPair(3);
  const std::vector<uint8_t> sealed = encodeLinkVerdict(k.connector, 3, 0b101);
  ASSERT_EQ(sealed.size(), kLinkVerdictBytes);
  uint32_t mask = 0;
  ASSERT_TRUE(decodeLinkVerdict(k.acceptor, sealed.data(), 3, &mask));
  EXPECT_EQ(mask, 0b101u);
}

TEST(TcpLinkVerdict, AnotherSocketsKeysOrLinkCountIsRefused) {
  const KeyPair k = keyPair(3);
  const std::vector<uint8_t> sealed = encodeLinkVerdict(k.connector, 2, 0b01);
  uint32_t mask = 0;
  EXPECT_FALSE(decodeLinkVerdict(keyPair(9).acceptor, sealed.data(), 2, &mask));
  EXPECT_FALSE(decodeLinkVerdict(k.acceptor, sealed.data(), 3, &mask));
  // Its own keys the other way round: a verdict reflected back.
  EXPECT_FALSE(decodeLinkVerdict(k.connector, sealed.data(), 2, &mask));
}

TEST(TcpLinkVerdict, EveryAlteredByteIsRefused) {
  const KeyPair k = keyPair(5);
  const std::vector<uint8_t> sealed = encodeLinkVerdict(k.connector, 2, 0b10);
  for (size_t i = 0; i < sealed.size(); ++i) {
    std::vector<uint8_t> altered = sealed;
    altered[i] ^= 0x01;
    uint32_t mask = 0;
    EXPECT_FALSE(decodeLinkVerdict(k.acceptor, altered.data(), 2, &mask)) << i;
  }
}

TEST(TcpLinkVerdict, IsTheDirectionsSecondMessageNotItsFirst) {
  // The hello is message 0 of the direction (its nonce), the verdict
  // message 1: a verdict sealed as message 0, which would reuse the
  // hello's nonce with the same key, is refused.
  const KeyPair k = keyPair(7);
  WireWriter w;
  w.u32(2);
  w.u32(0b11);
  static const char kLabel[] = "mcl tcp links";
  Sealer first(k.connector.send, 0);
  const std::vector<uint8_t> asFirst = first.seal(
      w.bytes(), reinterpret_cast<const uint8_t*>(kLabel), sizeof(kLabel));
  ASSERT_EQ(asFirst.size(), kLinkVerdictBytes);
  uint32_t mask = 0;
  EXPECT_FALSE(decodeLinkVerdict(k.acceptor, asFirst.data(), 2, &mask));
  // The same, sealed as message 1: taken (the label above is the one).
  Sealer second(k.connector.send, 1);
  const std::vector<uint8_t> asSecond = second.seal(
      w.bytes(), reinterpret_cast<const uint8_t*>(kLabel), sizeof(kLabel));
  ASSERT_TRUE(decodeLinkVerdict(k.acceptor, asSecond.data(), 2, &mask));
  EXPECT_EQ(mask, 0b11u);
}

}  // namespace
}  // namespace mcl::transport::tcp
