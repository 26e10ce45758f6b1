// Tests for the bootstrap wire format (core/wire.h) and its messages and
// framing (core/bootstrap/bootstrap_protocol.h). These bytes come from the
// network, possibly from a stranger: whatever arrives, decoding either succeeds
// or throws mcl::Error with mclRemoteError, and never reads out of bounds.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/sealed_channel.h"
#include "base/session_keys.h"
#include "base/wire.h"
#include "core/bootstrap/bootstrap_protocol.h"

namespace mcl {
namespace {

using Bytes = std::vector<uint8_t>;

// Runs f and expects mcl::Error with mclRemoteError (and nothing else).
void expectRemoteError(const std::function<void()>& f, const std::string& why,
                       const char* mentions = nullptr) {
  try {
    f();
    ADD_FAILURE() << why << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclRemoteError) << why << ": " << e.what();
    if (mentions != nullptr) {
      EXPECT_NE(std::string(e.what()).find(mentions), std::string::npos)
          << why << ": " << e.what();
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << why << ": threw a non-mcl exception: " << e.what();
  }
}

// ---- WireWriter / WireReader ----

TEST(WireTest, IntegersAreBigEndian) {
  WireWriter w;
  w.u8(0xab);
  w.u32(0x01020304);
  w.u64(0x1122334455667788ull);
  w.i32(-2);
  const Bytes want = {0xab, 1,    2,    3,    4,    0x11, 0x22, 0x33, 0x44,
                      0x55, 0x66, 0x77, 0x88, 0xff, 0xff, 0xff, 0xfe};
  EXPECT_EQ(w.bytes(), want);
  WireReader r(want.data(), want.size(), "test");
  EXPECT_EQ(r.u8(), 0xab);
  EXPECT_EQ(r.u32(), 0x01020304u);
  EXPECT_EQ(r.u64(), 0x1122334455667788ull);
  EXPECT_EQ(r.i32(), -2);
  EXPECT_NO_THROW(r.finish());
}

TEST(WireTest, BlobsAndStringsRoundTrip) {
  WireWriter w;
  w.str("");
  w.str(std::string("a\0b", 3));
  const uint8_t raw[3] = {9, 8, 7};
  w.blob(raw, 3);
  w.raw(raw, 2);
  Bytes b = w.take();
  WireReader r(b.data(), b.size(), "test");
  EXPECT_EQ(r.str(0), "");
  EXPECT_EQ(r.str(3), std::string("a\0b", 3));
  EXPECT_EQ(r.blob(3), Bytes({9, 8, 7}));
  uint8_t two[2] = {};
  r.raw(two, 2);
  EXPECT_EQ(two[0], 9);
  EXPECT_EQ(two[1], 8);
  EXPECT_NO_THROW(r.finish());
}

TEST(WireTest, ReaderRejectsOverrunsAndTrailingBytes) {
  const Bytes three = {1, 2, 3};
  expectRemoteError([&] { WireReader(three.data(), 3, "thing").u32(); },
                    "u32 of 3 bytes", "malformed thing: truncated");
  expectRemoteError([&] { WireReader(three.data(), 3, "thing").u64(); },
                    "u64 of 3 bytes");
  expectRemoteError([&] { WireReader(three.data(), 0, "thing").u8(); },
                    "u8 of nothing");
  expectRemoteError(
      [&] {
        uint8_t out[4];
        WireReader(three.data(), 3, "thing").raw(out, 4);
      },
      "raw past the end");
  expectRemoteError([&] { WireReader(three.data(), 3, "thing").finish(); },
                    "trailing", "3 trailing bytes");

  WireWriter big;  // a length field larger than the limit
  big.u32(11);
  big.raw("0123456789A", 11);
  expectRemoteError(
      [&] { WireReader(big.bytes().data(), big.bytes().size(), "t").blob(10); },
      "blob over its limit", "exceeds");
  WireWriter lying;  // a length field larger than what follows
  lying.u32(0xffffffffu);
  lying.raw("xy", 2);
  expectRemoteError(
      [&] {
        WireReader(lying.bytes().data(), lying.bytes().size(), "t")
            .blob(SIZE_MAX);
      },
      "blob longer than the buffer", "truncated");
}

// ---- messages ----

AuthProof sampleProof() {
  AuthProof m;
  for (size_t i = 0; i < m.nonce.size(); ++i)
    m.nonce[i] = static_cast<uint8_t>(i * 3 + 1);
  for (size_t i = 0; i < m.mac.size(); ++i)
    m.mac[i] = static_cast<uint8_t>(255 - i);
  return m;
}
Hello sampleHello() {
  Hello m;
  m.rank = 3;
  m.nranks = 7;
  m.pid = 0xfedcba98u;
  m.hostId = "host-id-\x01\xff";
  m.hostName = std::string(kMaxHostText, 'h');
  return m;
}
Welcome sampleWelcome() {
  Welcome m;
  m.commId = 0x0123456789abcdefull;
  m.peers = {{"a", "alpha", 1}, {"", "", 0}, {"c", "gamma", 0xffffffffu}};
  return m;
}
Failure sampleFailure() { return {mclTimeout, "rank 2 timed out"}; }
AllGatherMessage sampleAllGather() {
  AllGatherMessage m;
  m.round = 42;
  m.parts = {{1, 2, 3}, {}, Bytes(300, 0x5a)};
  return m;
}

struct Codec {
  const char* name;
  Bytes valid;
  std::function<void(const Bytes&)> decode;
};

std::vector<Codec> allCodecs() {
  return {
      {"AuthProof", encode(sampleProof()),
       [](const Bytes& b) { decodeAuthProof(b); }},
      {"Hello", encode(sampleHello()), [](const Bytes& b) { decodeHello(b); }},
      {"Welcome", encode(sampleWelcome()),
       [](const Bytes& b) { decodeWelcome(b); }},
      {"Failure", encode(sampleFailure()),
       [](const Bytes& b) { decodeFailure(b); }},
      {"AllGather", encode(sampleAllGather()),
       [](const Bytes& b) { decodeAllGather(b); }},
  };
}

TEST(BootstrapMessageTest, RoundTrips) {
  AuthProof p = decodeAuthProof(encode(sampleProof()));
  EXPECT_EQ(p.nonce, sampleProof().nonce);
  EXPECT_EQ(p.mac, sampleProof().mac);

  Hello h = decodeHello(encode(sampleHello()));
  EXPECT_EQ(h.protocol, kBootstrapProtocol);
  EXPECT_EQ(h.rank, 3);
  EXPECT_EQ(h.nranks, 7);
  EXPECT_EQ(h.pid, 0xfedcba98u);
  EXPECT_EQ(h.hostId, sampleHello().hostId);
  EXPECT_EQ(h.hostName, sampleHello().hostName);
  Hello last = sampleHello();  // the highest rank and size there may be
  last.nranks = static_cast<int32_t>(kMaxRanks);
  last.rank = last.nranks - 1;
  EXPECT_EQ(decodeHello(encode(last)).rank, last.rank);

  Welcome w = decodeWelcome(encode(sampleWelcome()));
  EXPECT_EQ(w.commId, sampleWelcome().commId);
  ASSERT_EQ(w.peers.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(w.peers[i].hostId, sampleWelcome().peers[i].hostId);
    EXPECT_EQ(w.peers[i].hostName, sampleWelcome().peers[i].hostName);
    EXPECT_EQ(w.peers[i].pid, sampleWelcome().peers[i].pid);
  }

  Failure f = decodeFailure(encode(sampleFailure()));
  EXPECT_EQ(f.code, mclTimeout);
  EXPECT_EQ(f.message, "rank 2 timed out");

  AllGatherMessage a = decodeAllGather(encode(sampleAllGather()));
  EXPECT_EQ(a.round, 42u);
  EXPECT_EQ(a.parts, sampleAllGather().parts);
  AllGatherMessage none;
  EXPECT_TRUE(decodeAllGather(encode(none)).parts.empty());
}

TEST(BootstrapMessageTest, EveryTruncationIsRemoteError) {
  for (const Codec& c : allCodecs()) {
    ASSERT_NO_THROW(c.decode(c.valid)) << c.name;
    for (size_t len = 0; len < c.valid.size(); ++len) {
      Bytes cut(c.valid.begin(), c.valid.begin() + static_cast<ptrdiff_t>(len));
      expectRemoteError([&] { c.decode(cut); },
                        std::string(c.name) + " cut to " + std::to_string(len));
    }
  }
}

TEST(BootstrapMessageTest, TrailingBytesAreRemoteError) {
  for (const Codec& c : allCodecs()) {
    Bytes longer = c.valid;
    longer.push_back(0);
    expectRemoteError([&] { c.decode(longer); },
                      std::string(c.name) + " + 1 byte", "trailing");
  }
}

TEST(BootstrapMessageTest, FieldsOverTheirLimitsAreRemoteError) {
  Hello h = sampleHello();
  h.hostName = std::string(kMaxHostText + 1, 'h');
  expectRemoteError([&] { decodeHello(encode(h)); }, "long host name",
                    "exceeds");
  h = sampleHello();
  h.hostId = std::string(kMaxHostText + 1, 'i');
  expectRemoteError([&] { decodeHello(encode(h)); }, "long host id");
  // The root sizes its table from the first Hello's nranks.
  for (auto [rank, nranks] : {std::pair{0, 0}, std::pair{0, -1},
                              std::pair{0, static_cast<int>(kMaxRanks) + 1},
                              std::pair{-1, 4}, std::pair{4, 4}}) {
    h = sampleHello();
    h.rank = rank;
    h.nranks = nranks;
    expectRemoteError(
        [&] { decodeHello(encode(h)); },
        "rank " + std::to_string(rank) + " of " + std::to_string(nranks),
        "out of range");
  }
  Failure f{mclSystemError, std::string(4097, 'm')};
  expectRemoteError([&] { decodeFailure(encode(f)); }, "long failure text");
  AllGatherMessage a;
  a.parts = {Bytes(kMaxAllGatherBytes + 1, 1)};
  expectRemoteError([&] { decodeAllGather(encode(a)); }, "big all-gather part",
                    "exceeds");

  Welcome empty;
  expectRemoteError([&] { decodeWelcome(encode(empty)); }, "no ranks",
                    "0 ranks");
  WireWriter many;  // a rank count beyond any communicator, with no peers
  many.u64(1);
  many.u32(0xffffffffu);
  expectRemoteError([&] { decodeWelcome(many.bytes()); }, "4G ranks");
  WireWriter parts;
  parts.u32(0);
  parts.u32(0x80000000u);
  expectRemoteError([&] { decodeAllGather(parts.bytes()); }, "2G parts");
}

// Random corruption: decoding succeeds or throws mclRemoteError, nothing
// else (no std::bad_alloc, no crash under the sanitizers).
TEST(BootstrapMessageTest, CorruptedBytesNeverEscapeAsOtherErrors) {
  std::mt19937 rng(12345);
  for (const Codec& c : allCodecs()) {
    for (int trial = 0; trial < 300; ++trial) {
      Bytes b = c.valid;
      int flips = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < flips; ++i)
        b[rng() % b.size()] = static_cast<uint8_t>(rng());
      try {
        c.decode(b);
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), mclRemoteError) << c.name << ": " << e.what();
      } catch (const std::exception& e) {
        ADD_FAILURE() << c.name << " trial " << trial << ": " << e.what();
      }
    }
  }
}

// ---- framing ----

Bytes frameBytes(uint32_t type, uint32_t length, const Bytes& payload) {
  WireWriter w;
  w.u32(type);
  w.u32(length);
  w.raw(payload.data(), payload.size());
  return w.take();
}

TEST(FrameTest, TakeFrameTakesCompleteFramesOnly) {
  const Bytes hello = encode(sampleHello());
  Bytes stream = frameBytes(4, static_cast<uint32_t>(hello.size()), hello);
  const size_t first = stream.size();
  Bytes bye = frameBytes(9, 0, {});
  stream.insert(stream.end(), bye.begin(), bye.end());
  Bytes third = frameBytes(7, 10, {1, 2, 3});  // 7 of 10 payload bytes missing
  stream.insert(stream.end(), third.begin(), third.end());

  // Any prefix of the first frame: false, buffer intact.
  for (size_t len = 0; len < first; ++len) {
    Bytes part(stream.begin(), stream.begin() + static_cast<ptrdiff_t>(len));
    const Bytes before = part;
    Frame f;
    EXPECT_FALSE(takeFrame(part, &f)) << len;
    EXPECT_EQ(part, before) << len;
  }
  Frame f;
  ASSERT_TRUE(takeFrame(stream, &f));
  EXPECT_EQ(f.type, FrameType::Hello);
  EXPECT_EQ(f.payload, hello);
  ASSERT_TRUE(takeFrame(stream, &f));
  EXPECT_EQ(f.type, FrameType::Bye);
  EXPECT_TRUE(f.payload.empty());
  EXPECT_FALSE(takeFrame(stream, &f));
  EXPECT_EQ(stream, third) << "the partial frame must stay buffered";
}

TEST(FrameTest, BadHeadersAreRemoteError) {
  for (uint32_t type : {0u, 12u, 0x80000001u, 0xffffffffu}) {
    Bytes b = frameBytes(type, 0, {});
    expectRemoteError(
        [&] {
          Frame f;
          takeFrame(b, &f);
        },
        "frame type " + std::to_string(type), "unknown type");
  }
  // Too big is refused from the header alone, before any payload arrives.
  Bytes huge = frameBytes(7, kMaxFrameBytes + 1, {});
  expectRemoteError(
      [&] {
        Frame f;
        takeFrame(huge, &f);
      },
      "oversized frame", "exceeds");
  Bytes largest = frameBytes(7, kMaxFrameBytes, {});
  Frame f;
  EXPECT_FALSE(takeFrame(largest, &f)) << "the limit itself is allowed";
  EXPECT_EQ(largest.size(), 8u);
}

TEST(FrameTest, FrameTypeNames) {
  std::vector<std::string> seen;
  for (uint32_t t = 1; t <= 11; ++t) {
    std::string name = frameTypeName(static_cast<FrameType>(t));
    EXPECT_NE(name, "unknown") << t;
    for (const auto& s : seen) EXPECT_NE(s, name);
    seen.push_back(name);
  }
  EXPECT_STREQ(frameTypeName(static_cast<FrameType>(99)), "unknown");
}

class SocketPairTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0);
  }
  void TearDown() override {
    close(fds_[0]);
    close(fds_[1]);
  }
  static platform::Deadline soon() {
    return platform::Clock::now() + std::chrono::seconds(2);
  }
  int fds_[2] = {-1, -1};
};

TEST_F(SocketPairTest, SendFrameWritesTheDocumentedLayout) {
  const Bytes payload = encode(sampleFailure());
  sendFrame(fds_[0], FrameType::Failure, payload, soon());
  const Bytes want =
      frameBytes(6, static_cast<uint32_t>(payload.size()), payload);
  Bytes got(want.size());
  ASSERT_EQ(recv(fds_[1], got.data(), got.size(), MSG_WAITALL),
            static_cast<ssize_t>(want.size()));
  EXPECT_EQ(got, want);
}

TEST_F(SocketPairTest, FramesRoundTrip) {
  const Bytes welcome = encode(sampleWelcome());
  sendFrame(fds_[0], FrameType::Welcome, welcome, soon());
  sendFrame(fds_[0], FrameType::Bye, {}, soon());
  Frame a = recvFrame(fds_[1], soon());
  EXPECT_EQ(a.type, FrameType::Welcome);
  EXPECT_EQ(a.payload, welcome);
  Frame b = recvFrame(fds_[1], soon());
  EXPECT_EQ(b.type, FrameType::Bye);
  EXPECT_TRUE(b.payload.empty());
}

TEST_F(SocketPairTest, RecvFrameRejectsBadHeaders) {
  Bytes huge = frameBytes(5, 0xffffffffu, {});
  ASSERT_EQ(write(fds_[0], huge.data(), huge.size()), 8);
  expectRemoteError([&] { recvFrame(fds_[1], soon()); }, "oversized frame");
  Bytes unknown = frameBytes(77, 0, {});
  ASSERT_EQ(write(fds_[0], unknown.data(), unknown.size()), 8);
  expectRemoteError([&] { recvFrame(fds_[1], soon()); }, "unknown frame");
}

// After the handshake: what one side seals the other opens, in order;
// anything altered, replayed or sent in the clear is an integrity error
// naming the peer, never a frame acted on.
// Both ends' sealers and openers of one rendezvous connection.
struct SealedPair {
  SealedPair() {
    Secret secret{};
    secret[0] = 7;
    Nonce rootNonce{}, rankNonce{};
    rootNonce[1] = 1;
    rankNonce[2] = 2;
    const SessionKeys rank = rendezvousKeys(secret, rootNonce, rankNonce, true);
    const SessionKeys root =
        rendezvousKeys(secret, rootNonce, rankNonce, false);
    rankSealer = std::make_unique<Sealer>(rank.send);
    rootOpener = std::make_unique<Opener>(root.receive);
    rankOpener = std::make_unique<Opener>(rank.receive);
  }
  std::unique_ptr<Sealer> rankSealer;
  std::unique_ptr<Opener> rankOpener, rootOpener;
};

class SealedFrameTest : public SocketPairTest {
 protected:
  Frame openAtRoot() {
    return openSealedFrame(*pair_.rootOpener, recvFrame(fds_[1], soon()),
                           "rank 3");
  }
  SealedPair pair_;
};

TEST_F(SealedFrameTest, RoundTripsInOrderAndHidesThePayload) {
  const Bytes payload = encode(sampleWelcome());
  sendSealedFrame(fds_[0], *pair_.rankSealer, FrameType::AllGather, payload,
                  soon());
  sendSealedFrame(fds_[0], *pair_.rankSealer, FrameType::Bye, {}, soon());
  Bytes raw(8 + 4 + payload.size() + kSealOverhead);
  ASSERT_EQ(recv(fds_[1], raw.data(), raw.size(), MSG_PEEK | MSG_WAITALL),
            static_cast<ssize_t>(raw.size()));
  // The payload's text is not on the wire.
  const std::string onWire(raw.begin(), raw.end());
  EXPECT_EQ(onWire.find(sampleWelcome().peers[0].hostName), std::string::npos);
  Frame a = openAtRoot();
  EXPECT_EQ(a.type, FrameType::AllGather);
  EXPECT_EQ(a.payload, payload);
  Frame b = openAtRoot();
  EXPECT_EQ(b.type, FrameType::Bye);
  EXPECT_TRUE(b.payload.empty());
}

TEST_F(SealedFrameTest, AFlippedByteAnywhereIsAnIntegrityErrorNamingThePeer) {
  const Bytes payload = encode(sampleFailure());
  for (size_t at = 8; at < 8 + 4 + payload.size() + kSealOverhead; ++at) {
    // A fresh pair of keys per case: a failed open leaves nothing usable.
    SealedPair fresh;
    sendSealedFrame(fds_[0], *fresh.rankSealer, FrameType::Failure, payload,
                    soon());
    Frame f = recvFrame(fds_[1], soon());
    f.payload[at - 8] ^= 0x01;
    expectRemoteError(
        [&] { openSealedFrame(*fresh.rootOpener, f, "rank 3 at 10.0.0.2"); },
        "flipped byte " + std::to_string(at), "integrity check failed");
    try {
      openSealedFrame(*fresh.rootOpener, f, "rank 3 at 10.0.0.2");
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("rank 3 at 10.0.0.2"),
                std::string::npos);
    }
  }
}

TEST_F(SealedFrameTest, ReplayedReflectedAndClearFramesAreRefused) {
  sendSealedFrame(fds_[0], *pair_.rankSealer, FrameType::Bye, {}, soon());
  Frame first = recvFrame(fds_[1], soon());
  Frame copy = first;
  EXPECT_EQ(openSealedFrame(*pair_.rootOpener, first, "rank 3").type,
            FrameType::Bye);
  expectRemoteError([&] { openSealedFrame(*pair_.rootOpener, copy, "rank 3"); },
                    "a replayed frame", "integrity check failed");
  // The rank's own frame sent back to it: the other direction's key.
  expectRemoteError(
      [&] { openSealedFrame(*pair_.rankOpener, copy, "the root"); },
      "a reflected frame", "integrity check failed");
  Frame clear;
  clear.type = FrameType::Failure;
  clear.payload = encode(sampleFailure());
  expectRemoteError(
      [&] { openSealedFrame(*pair_.rootOpener, clear, "rank 3"); },
      "a frame in the clear", "in the clear");
}

// The side channel's numbered messages: a gap is allowed (a message the
// sender could not send), a replay, a reorder or an altered byte is not.
TEST(SessionKeysTest, NumberedMessagesAllowGapsNeverReplays) {
  SessionKey key{};
  key[3] = 9;
  const uint8_t header[4] = {1, 2, 3, 4};
  const std::vector<uint8_t> plain = {'B'};
  uint64_t last = 0;
  std::vector<uint8_t> out;
  const auto one = sealNumbered(key, 1, plain, header, sizeof(header));
  const auto three = sealNumbered(key, 3, plain, header, sizeof(header));
  EXPECT_TRUE(openNumbered(key, 1, &last, one, header, sizeof(header), &out));
  EXPECT_EQ(out, plain);
  EXPECT_TRUE(openNumbered(key, 3, &last, three, header, sizeof(header), &out));
  EXPECT_EQ(last, 3u);
  EXPECT_FALSE(openNumbered(key, 1, &last, one, header, sizeof(header), &out))
      << "a replay";
  EXPECT_FALSE(openNumbered(key, 4, &last, three, header, sizeof(header), &out))
      << "a message under another number";
  auto altered = sealNumbered(key, 5, plain, header, sizeof(header));
  altered[0] ^= 1;
  EXPECT_FALSE(
      openNumbered(key, 5, &last, altered, header, sizeof(header), &out));
  const uint8_t otherHeader[4] = {1, 2, 3, 5};
  EXPECT_FALSE(openNumbered(key, 6, &last,
                            sealNumbered(key, 6, plain, header, sizeof(header)),
                            otherHeader, sizeof(otherHeader), &out))
      << "a header altered";
  EXPECT_EQ(last, 3u);
}

TEST(SessionKeysTest, EveryInputChangesTheKeysAndDirectionsDiffer) {
  Secret secret{};
  Nonce a{}, b{};
  b[0] = 1;
  const SessionKeys base = deriveSessionKeys(secret, "x", a, b, true);
  EXPECT_NE(base.send, base.receive);
  const SessionKeys other = deriveSessionKeys(secret, "x", a, b, false);
  EXPECT_EQ(base.send, other.receive);
  EXPECT_EQ(base.receive, other.send);
  Secret secret2 = secret;
  secret2[15] = 1;
  EXPECT_NE(deriveSessionKeys(secret2, "x", a, b, true).send, base.send);
  EXPECT_NE(deriveSessionKeys(secret, "y", a, b, true).send, base.send);
  EXPECT_NE(deriveSessionKeys(secret, "x", b, a, true).send, base.send);
  EXPECT_NE(deriveChildSecret(secret, "split 1"),
            deriveChildSecret(secret, "split 2"));
  EXPECT_NE(deriveChildSecret(secret, "split 1"), secret);
}

}  // namespace
}  // namespace mcl
