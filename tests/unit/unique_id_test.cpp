// Tests for the unique id (core/bootstrap/unique_id.h: its 128-byte layout and
// string form) and the challenge-response MAC behind it (core/auth.h).
#include <gtest/gtest.h>
#include <mcl/mcl.h>
#include <netinet/in.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <random>
#include <string>

#include "base/auth.h"
#include "base/error.h"
#include "core/bootstrap/unique_id.h"

namespace mcl {
namespace {

Secret sampleSecret() {
  Secret s;
  for (size_t i = 0; i < s.size(); ++i)
    s[i] = static_cast<uint8_t>(0xf0 + i * 17);
  return s;
}

UniqueIdContents contents(const std::string& host, int port) {
  UniqueIdContents c;
  c.root = platform::SocketAddress::fromNumeric(host, port);
  c.secret = sampleSecret();
  return c;
}

void expectSameContents(const UniqueIdContents& got,
                        const UniqueIdContents& want) {
  EXPECT_EQ(got.root.storage.ss_family, want.root.storage.ss_family);
  EXPECT_EQ(got.root.length, want.root.length);
  EXPECT_EQ(got.root.host(), want.root.host());
  EXPECT_EQ(got.root.port(), want.root.port());
  EXPECT_EQ(got.secret, want.secret);
}

// ---- binary form ----

TEST(UniqueIdTest, BinaryRoundTripIpv4) {
  UniqueIdContents c = contents("192.168.7.21", 29500);
  mclUniqueId id = encodeUniqueId(c);
  expectSameContents(decodeUniqueId(id), c);
  const auto* b = reinterpret_cast<const uint8_t*>(id.internal);
  EXPECT_EQ(std::memcmp(b, "MCLI", 4), 0);
  EXPECT_EQ(b[5], 4);
  EXPECT_EQ(b[6] << 8 | b[7], 29500);  // big-endian port
  EXPECT_EQ(b[8], 192);
  EXPECT_EQ(b[11], 21);
  for (size_t i = 40; i < sizeof(id.internal); ++i)
    ASSERT_EQ(b[i], 0) << "byte " << i << " of the unused tail";
}

TEST(UniqueIdTest, BinaryRoundTripIpv6) {
  for (const char* host : {"::1", "fd00:1234::abcd:1", "2001:db8::ff00:42:8329",
                           "::ffff:10.0.0.1"}) {
    SCOPED_TRACE(host);
    UniqueIdContents c = contents(host, 65535);
    mclUniqueId id = encodeUniqueId(c);
    expectSameContents(decodeUniqueId(id), c);
    EXPECT_EQ(reinterpret_cast<const uint8_t*>(id.internal)[5], 6);
  }
}

// The root's other addresses (one per cable or network) travel too, in
// both forms, as many as fit.
TEST(UniqueIdTest, SeveralRootAddressesRoundTrip) {
  UniqueIdContents c = contents("10.77.0.1", 4000);
  c.moreRoots.push_back(
      platform::SocketAddress::fromNumeric("10.77.1.1", 4000));
  c.moreRoots.push_back(platform::SocketAddress::fromNumeric("fd00::7", 4001));
  c.moreRoots.push_back(
      platform::SocketAddress::fromNumeric("127.0.0.1", 4002));
  for (const UniqueIdContents& got :
       {decodeUniqueId(encodeUniqueId(c)),
        uniqueIdFromString(uniqueIdToString(c))}) {
    expectSameContents(got, c);
    ASSERT_EQ(got.moreRoots.size(), 3u);
    EXPECT_EQ(got.moreRoots[0].toString(), "10.77.1.1:4000");
    EXPECT_EQ(got.moreRoots[1].toString(), "[fd00::7]:4001");
    EXPECT_EQ(got.moreRoots[2].toString(), "127.0.0.1:4002");
    EXPECT_EQ(got.allRoots().size(), 4u);
  }
  EXPECT_EQ(uniqueIdToString(c).rfind("mcl1:10.77.0.1:4000,10.77.1.1:4000,", 0),
            0u);
  // More than fit: the binary form keeps a prefix, never overflows.
  UniqueIdContents many = contents("10.0.0.1", 1);
  for (int i = 0; i < 40; ++i)
    many.moreRoots.push_back(
        platform::SocketAddress::fromNumeric("10.0.1." + std::to_string(i), 2));
  UniqueIdContents kept = decodeUniqueId(encodeUniqueId(many));
  EXPECT_GE(kept.moreRoots.size(), 10u);
  EXPECT_LT(kept.moreRoots.size(), 40u);
}

TEST(UniqueIdTest, DecodeRejectsForeignBytes) {
  auto expectRejected = [](const mclUniqueId& id, const std::string& why) {
    try {
      decodeUniqueId(id);
      ADD_FAILURE() << why << ": accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), mclInvalidArgument) << why;
      EXPECT_NE(std::string(e.what()).find("unique id"), std::string::npos)
          << e.what();
    }
  };
  mclUniqueId zero;
  std::memset(&zero, 0, sizeof(zero));
  expectRejected(zero, "all zeros");
  std::mt19937 rng(7);
  for (int trial = 0; trial < 100; ++trial) {
    mclUniqueId blob;
    for (char& ch : blob.internal) ch = static_cast<char>(rng());
    expectRejected(blob, "random blob " + std::to_string(trial));
  }
  const mclUniqueId good = encodeUniqueId(contents("10.0.0.1", 80));
  for (size_t at : {size_t{0}, size_t{3}, size_t{4}, size_t{5}}) {
    mclUniqueId bad = good;
    bad.internal[at] = static_cast<char>(bad.internal[at] ^ 0x40);
    expectRejected(bad, "byte " + std::to_string(at) + " changed");
  }
  // Port 0, which nothing listens on (the string form refuses it too).
  expectRejected(encodeUniqueId(contents("10.0.0.1", 0)), "root port 0");
  UniqueIdContents more = contents("10.0.0.1", 80);
  more.moreRoots.push_back(platform::SocketAddress::fromNumeric("10.0.0.2", 0));
  expectRejected(encodeUniqueId(more), "a further root on port 0");
}

// ---- string form ----

TEST(UniqueIdTest, StringRoundTrip) {
  UniqueIdContents v4 = contents("127.0.0.1", 1);
  std::string s4 = uniqueIdToString(v4);
  EXPECT_EQ(s4, "mcl1:127.0.0.1:1:f00112233445566778899aabbccddeef");
  expectSameContents(uniqueIdFromString(s4), v4);

  UniqueIdContents v6 = contents("fe80::1:2", 40000);
  std::string s6 = uniqueIdToString(v6);
  EXPECT_EQ(s6, "mcl1:[fe80::1:2]:40000:f00112233445566778899aabbccddeef");
  expectSameContents(uniqueIdFromString(s6), v6);

  // Upper-case hex is the same secret.
  expectSameContents(
      uniqueIdFromString("mcl1:127.0.0.1:1:F00112233445566778899AABBCCDDEEF"),
      v4);
  // String and binary forms agree.
  mclUniqueId a = encodeUniqueId(uniqueIdFromString(s6));
  mclUniqueId b = encodeUniqueId(v6);
  EXPECT_EQ(std::memcmp(&a, &b, sizeof(a)), 0);
}

struct Malformed {
  const char* text;
  const char* says;  // the part of the message that names the problem
};

class MalformedStringTest : public ::testing::TestWithParam<Malformed> {};

TEST_P(MalformedStringTest, IsInvalidArgumentSayingWhy) {
  try {
    uniqueIdFromString(GetParam().text);
    ADD_FAILURE() << "accepted '" << GetParam().text << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(GetParam().says), std::string::npos)
        << "'" << GetParam().text << "': " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "'" << GetParam().text
                  << "' threw a non-mcl exception: " << e.what();
  }
}

#define SECRET "00112233445566778899aabbccddeeff"
INSTANTIATE_TEST_SUITE_P(
    EachPart, MalformedStringTest,
    ::testing::Values(
        Malformed{"", "prefix"}, Malformed{"mcl2:1.2.3.4:5:" SECRET, "prefix"},
        Malformed{"MCL1:1.2.3.4:5:" SECRET, "prefix"},
        Malformed{"1.2.3.4:5:" SECRET, "prefix"},
        Malformed{"mcl1:", "no secret"}, Malformed{"mcl1:1.2.3.4", "no secret"},
        Malformed{"mcl1:1.2.3.4:" SECRET, "no port"},
        Malformed{"mcl1:1.2.3.4::" SECRET, "port is not a number"},
        Malformed{"mcl1:1.2.3.4:http:" SECRET, "port is not a number"},
        Malformed{"mcl1:1.2.3.4:+80:" SECRET, "port is not a number"},
        Malformed{"mcl1:1.2.3.4:-1:" SECRET, "port is not a number"},
        Malformed{"mcl1:1.2.3.4:123456:" SECRET, "port out of range"},
        Malformed{"mcl1:1.2.3.4:0:" SECRET, "port out of range"},
        Malformed{"mcl1:1.2.3.4:65536:" SECRET, "port out of range"},
        Malformed{"mcl1:1.2.3:5:" SECRET, "address"},
        Malformed{"mcl1:localhost:5:" SECRET, "address"},
        Malformed{"mcl1::5:" SECRET, "address"},
        Malformed{"mcl1:[::1:5:" SECRET, "address"},
        Malformed{"mcl1:fe80::1%eth0:5:" SECRET, "address"},
        Malformed{"mcl1:1.2.3.4:5:", "32 hex digits"},
        Malformed{"mcl1:1.2.3.4:5:" SECRET "0", "32 hex digits"},
        Malformed{"mcl1:1.2.3.4:5:0112233445566778899aabbccddeeff",
                  "32 hex digits"},
        Malformed{"mcl1:1.2.3.4:5:g0112233445566778899aabbccddeeff", "non-hex"},
        Malformed{"mcl1:1.2.3.4:5:0011223344556677 8899aabbccddeef",
                  "non-hex"}),
    [](const ::testing::TestParamInfo<Malformed>& param) {
      return "case" + std::to_string(param.index);
    });
#undef SECRET

// ---- auth ----

Nonce nonceFrom(uint8_t start) {
  Nonce n;
  for (size_t i = 0; i < n.size(); ++i) n[i] = static_cast<uint8_t>(start + i);
  return n;
}

TEST(AuthTest, MacIsHmacSha256OfLabelAndNonces) {
  Secret key;
  for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(i);
  // HMAC-SHA256(key 00..0f, "client" || 00..1f || 64..83), computed
  // independently (Python's hmac module).
  const char* want =
      "2de4b244b3031dd633e3bf3bcdb4dd07596928ce511788cb14163346b579a2d9";
  Mac mac = authMac(key, "client", nonceFrom(0), nonceFrom(100));
  std::string hex;
  for (uint8_t b : mac) {
    char two[3];
    std::snprintf(two, sizeof(two), "%02x", b);
    hex += two;
  }
  EXPECT_EQ(hex, want);
}

TEST(AuthTest, MacDependsOnEveryInput) {
  const Secret s = sampleSecret();
  const Nonce a = nonceFrom(1), b = nonceFrom(2);
  const Mac base = authMac(s, "client", a, b);
  EXPECT_TRUE(macEqual(base, authMac(s, "client", a, b))) << "deterministic";
  EXPECT_FALSE(macEqual(base, authMac(s, "server", a, b))) << "label";
  EXPECT_FALSE(macEqual(base, authMac(s, "client", b, a))) << "nonce order";
  Secret other = s;
  other[15] ^= 1;
  EXPECT_FALSE(macEqual(base, authMac(other, "client", a, b))) << "secret";
  Nonce a2 = a;
  a2[31] ^= 0x80;
  EXPECT_FALSE(macEqual(base, authMac(s, "client", a2, b))) << "first nonce";
}

TEST(AuthTest, MacEqualComparesEveryByte) {
  const Mac m = authMac(sampleSecret(), "x", nonceFrom(5), nonceFrom(9));
  EXPECT_TRUE(macEqual(m, m));
  for (size_t i : {size_t{0}, size_t{13}, size_t{31}}) {
    Mac d = m;
    d[i] ^= 1;
    EXPECT_FALSE(macEqual(m, d)) << "byte " << i;
    EXPECT_FALSE(macEqual(d, m)) << "byte " << i;
  }
}

TEST(AuthTest, RandomValuesDiffer) {
  EXPECT_NE(randomSecret(), randomSecret());
  EXPECT_NE(randomNonce(), randomNonce());
  EXPECT_NE(randomU64(), randomU64());
}

}  // namespace
}  // namespace mcl
