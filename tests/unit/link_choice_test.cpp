// Tests for the TCP transport's choice of links between two hosts
// (transports/tcp/link_choice.h): Thunderbolt cables (/30, /126) first, all
// of them; else one shared LAN; else one routed path; loopback only on one
// host. Both sides must reach the same answer from the same two lists. Also
// the subnet math and interface listing it relies on (platform/interfaces.h).
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/wire.h"
#include "platform/interfaces.h"
#include "transports/tcp/link_choice.h"

namespace mcl::transport::tcp {
namespace {

using platform::SocketAddress;
using Endpoints = std::vector<Endpoint>;
using Pairs = std::vector<std::pair<std::string, std::string>>;

Endpoint ep(const std::string& name, const std::string& host, int prefix,
            bool allowed = true, int port = 5000) {
  Endpoint e;
  e.interfaceName = name;
  e.address = SocketAddress::fromNumeric(host, port);
  e.prefixLength = prefix;
  e.loopback = host == "127.0.0.1" || host == "::1";
  e.allowed = allowed;
  return e;
}

// (local host, remote host) of each link, in order.
Pairs hosts(const std::vector<Link>& links) {
  Pairs out;
  for (const auto& l : links)
    out.emplace_back(l.local.address.host(), l.remote.address.host());
  return out;
}

Pairs swapped(Pairs p) {
  for (auto& x : p) std::swap(x.first, x.second);
  return p;
}

// Two hosts joined by two Thunderbolt cables and a shared LAN.
const Endpoints kA = {ep("lo0", "127.0.0.1", 8), ep("en0", "192.168.1.10", 24),
                      ep("en2", "10.0.1.1", 30), ep("en3", "10.0.2.1", 30)};
const Endpoints kB = {ep("lo0", "127.0.0.1", 8), ep("en3", "10.0.2.2", 30),
                      ep("en0", "192.168.1.20", 24), ep("en2", "10.0.1.2", 30)};

TEST(LinkChoiceTest, OneCableGivesOneCableLink) {
  Endpoints a = {ep("en0", "192.168.1.10", 24), ep("en2", "10.0.1.1", 30)};
  Endpoints b = {ep("en2", "10.0.1.2", 30, true, 6000)};
  auto links = chooseLinks(a, b, false);
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].kind, LinkKind::Cable);
  EXPECT_STREQ(linkKindName(links[0].kind), "cable");
  EXPECT_EQ(links[0].local.interfaceName, "en2");
  EXPECT_EQ(links[0].local.address.toString(), "10.0.1.1:5000");
  EXPECT_EQ(links[0].remote.address.toString(), "10.0.1.2:6000");
}

TEST(LinkChoiceTest, TwoCablesGiveTwoLinksInTheSameOrderOnBothSides) {
  auto ab = chooseLinks(kA, kB, false);
  auto ba = chooseLinks(kB, kA, false);
  ASSERT_EQ(ab.size(), 2u);
  ASSERT_EQ(ba.size(), 2u);
  for (const auto& l : ab) EXPECT_EQ(l.kind, LinkKind::Cable);
  for (const auto& l : ba) EXPECT_EQ(l.kind, LinkKind::Cable);
  EXPECT_EQ(hosts(ab),
            Pairs({{"10.0.1.1", "10.0.1.2"}, {"10.0.2.1", "10.0.2.2"}}));
  EXPECT_EQ(hosts(ba), swapped(hosts(ab)));
  EXPECT_FALSE(cableLeftUnused(kA, kB, ab));
  EXPECT_FALSE(cableLeftUnused(kB, kA, ba));
}

TEST(LinkChoiceTest, OnlyALanGivesOneLanLink) {
  Endpoints a = {ep("en0", "192.168.1.10", 24), ep("en1", "192.168.1.11", 24)};
  Endpoints b = {ep("en1", "192.168.1.21", 24), ep("en0", "192.168.1.20", 24)};
  auto ab = chooseLinks(a, b, false);
  auto ba = chooseLinks(b, a, false);
  ASSERT_EQ(ab.size(), 1u);
  EXPECT_EQ(ab[0].kind, LinkKind::Lan);
  EXPECT_EQ(hosts(ba), swapped(hosts(ab)));
  EXPECT_FALSE(cableLeftUnused(a, b, ab));
  EXPECT_FALSE(cableLeftUnused(a, b, {}));
}

TEST(LinkChoiceTest, NoSharedSubnetGivesOneRoutedLink) {
  Endpoints a = {ep("lo0", "127.0.0.1", 8), ep("en0", "2001:db8:1::10", 64),
                 ep("en1", "192.168.1.10", 24), ep("en2", "192.168.7.10", 24)};
  Endpoints b = {ep("lo0", "127.0.0.1", 8), ep("en0", "10.9.0.20", 16),
                 ep("en1", "2001:db8:2::20", 64)};
  auto links = chooseLinks(a, b, false);
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].kind, LinkKind::Routed);
  EXPECT_EQ(hosts(links), Pairs({{"2001:db8:1::10", "2001:db8:2::20"}}));
  Endpoints a4 = {a[0], a[2], a[3]};
  EXPECT_EQ(hosts(chooseLinks(a4, b, false)),
            Pairs({{"192.168.1.10", "10.9.0.20"}}));
}

TEST(LinkChoiceTest, LoopbackOnlyWithinOneHost) {
  Endpoints a = {ep("en0", "192.168.1.10", 24), ep("lo0", "127.0.0.1", 8)};
  auto same = chooseLinks(a, a, true);
  ASSERT_EQ(same.size(), 1u);
  EXPECT_EQ(same[0].kind, LinkKind::Loopback);
  EXPECT_EQ(hosts(same), Pairs({{"127.0.0.1", "127.0.0.1"}}));
  // Across hosts, never, even though both have 127.0.0.1 and ::1.
  Endpoints b = {ep("lo0", "::1", 128), ep("lo0", "127.0.0.1", 8),
                 ep("en0", "172.16.0.20", 16)};
  auto across = chooseLinks(a, b, false);
  ASSERT_EQ(across.size(), 1u);
  EXPECT_EQ(across[0].kind, LinkKind::Routed);
  EXPECT_EQ(hosts(across), Pairs({{"192.168.1.10", "172.16.0.20"}}));
  Endpoints lo = {b[0], b[1]};
  EXPECT_TRUE(chooseLinks(lo, lo, false).empty());
}

TEST(LinkChoiceTest, FilteredCablesFallBackToLanAndWarn) {
  Endpoints a = kA;
  Endpoints b = kB;
  for (auto* list : {&a, &b})
    for (auto& e : *list) e.allowed = e.interfaceName == "en0";
  auto links = chooseLinks(a, b, false);
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].kind, LinkKind::Lan);
  EXPECT_EQ(hosts(links), Pairs({{"192.168.1.10", "192.168.1.20"}}));
  EXPECT_TRUE(cableLeftUnused(a, b, links));
  // Excluding the cables on one side only is enough.
  auto oneSide = chooseLinks(a, kB, false);
  ASSERT_EQ(oneSide.size(), 1u);
  EXPECT_EQ(oneSide[0].kind, LinkKind::Lan);
  EXPECT_TRUE(cableLeftUnused(a, kB, oneSide));
  // Excluding one of two cables leaves one cable link, and still warns.
  Endpoints one = kA;
  one[3].allowed = false;  // en3, the second cable
  auto links1 = chooseLinks(one, kB, false);
  ASSERT_EQ(links1.size(), 1u);
  EXPECT_EQ(hosts(links1), Pairs({{"10.0.1.1", "10.0.1.2"}}));
  EXPECT_TRUE(cableLeftUnused(one, kB, links1));
}

TEST(LinkChoiceTest, DisallowedEndpointsAreNeverUsed) {
  for (size_t mask = 0; mask < 16; ++mask) {
    Endpoints a = kA;
    for (size_t i = 0; i < a.size(); ++i) a[i].allowed = (mask >> i) & 1;
    for (const auto& l : chooseLinks(a, kB, false)) {
      EXPECT_TRUE(l.local.allowed) << "mask " << mask;
      EXPECT_TRUE(l.remote.allowed) << "mask " << mask;
    }
  }
}

// On one host, when nothing passes the filter (or no family matches), the
// last resort still must not use a filtered-out endpoint or mix families.
TEST(LinkChoiceTest, SameHostLastResortRespectsFilterAndFamily) {
  Endpoints none = kA;
  for (auto& e : none) e.allowed = false;
  for (const auto& l : chooseLinks(none, none, true))
    EXPECT_TRUE(l.local.allowed && l.remote.allowed)
        << linkKindName(l.kind) << " " << l.local.address.toString() << " - "
        << l.remote.address.toString();
  Endpoints v4 = {ep("en0", "192.168.1.10", 24)};
  Endpoints v6 = {ep("en0", "2001:db8::20", 64)};
  for (const auto& l : chooseLinks(v4, v6, true))
    EXPECT_EQ(l.local.address.storage.ss_family,
              l.remote.address.storage.ss_family)
        << l.local.address.toString() << " - " << l.remote.address.toString();
}

// Two ranks of one host see the same cable address on both sides; that is
// not a pair of hosts with an unused cable between them.
TEST(LinkChoiceTest, RanksOnOneHostWithACableDoNotWarn) {
  auto links = chooseLinks(kA, kA, true);
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].kind, LinkKind::Loopback);
  EXPECT_FALSE(cableLeftUnused(kA, kA, links));
}

TEST(LinkChoiceTest, Ipv6CableAndLan) {
  Endpoints a = {ep("en0", "2001:db8::10", 64), ep("en2", "fd00:1::1", 126)};
  Endpoints b = {ep("en2", "fd00:1::2", 126), ep("en0", "2001:db8::20", 64)};
  auto links = chooseLinks(a, b, false);
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].kind, LinkKind::Cable);
  EXPECT_EQ(hosts(links), Pairs({{"fd00:1::1", "fd00:1::2"}}));
  a[1].allowed = false;
  auto lan = chooseLinks(a, b, false);
  ASSERT_EQ(lan.size(), 1u);
  EXPECT_EQ(lan[0].kind, LinkKind::Lan);
  EXPECT_TRUE(cableLeftUnused(a, b, lan));
}

TEST(LinkChoiceTest, MixedFamiliesNeverPair) {
  Endpoints a = {ep("en0", "192.168.1.10", 24), ep("en2", "10.0.1.1", 30)};
  Endpoints b = {ep("en0", "2001:db8::20", 64), ep("en2", "fd00:1::2", 126)};
  EXPECT_TRUE(chooseLinks(a, b, false).empty());
  b.push_back(ep("en1", "172.16.0.20", 16));
  auto links = chooseLinks(a, b, false);
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].kind, LinkKind::Routed);
  EXPECT_EQ(hosts(links), Pairs({{"192.168.1.10", "172.16.0.20"}}));
}

TEST(LinkChoiceTest, ThreeHostMeshGivesEachPairItsOwnCable) {
  // A-B on 10.0.1.0/30, A-C on 10.0.2.0/30, B-C on 10.0.3.0/30.
  std::vector<Endpoints> host = {
      {ep("en0", "192.168.1.1", 24), ep("en2", "10.0.1.1", 30),
       ep("en3", "10.0.2.1", 30)},
      {ep("en0", "192.168.1.2", 24), ep("en2", "10.0.1.2", 30),
       ep("en3", "10.0.3.1", 30)},
      {ep("en0", "192.168.1.3", 24), ep("en2", "10.0.2.2", 30),
       ep("en3", "10.0.3.2", 30)}};
  const std::string want[3][3] = {{"", "10.0.1.1", "10.0.2.1"},
                                  {"10.0.1.2", "", "10.0.3.1"},
                                  {"10.0.2.2", "10.0.3.2", ""}};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      if (i == j) continue;
      auto links = chooseLinks(host[i], host[j], false);
      ASSERT_EQ(links.size(), 1u) << i << "->" << j;
      EXPECT_EQ(links[0].kind, LinkKind::Cable);
      EXPECT_EQ(hosts(links), Pairs({{want[i][j], want[j][i]}}))
          << i << "->" << j;
    }
  }
}

// ---- wire form ----

TEST(EndpointWireTest, RoundTripKeepsEveryField) {
  Endpoints in = {ep("lo0", "127.0.0.1", 8, true, 0),
                  ep("en2", "10.0.1.1", 30, false, 65535),
                  ep("en0", "fd00:1::1", 126, true, 1234),
                  ep("bridge-with-a-long-name", "::1", 128, false, 7)};
  Endpoints out = decodeEndpoints(encodeEndpoints(in));
  ASSERT_EQ(out.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[i].interfaceName, in[i].interfaceName);
    EXPECT_EQ(out[i].address.toString(), in[i].address.toString());
    EXPECT_EQ(out[i].address.storage.ss_family,
              in[i].address.storage.ss_family);
    EXPECT_EQ(out[i].address.length, in[i].address.length);
    EXPECT_EQ(out[i].prefixLength, in[i].prefixLength);
    EXPECT_EQ(out[i].loopback, in[i].loopback);
    EXPECT_EQ(out[i].allowed, in[i].allowed);
  }
  EXPECT_TRUE(decodeEndpoints(encodeEndpoints({})).empty());
}

void expectRemoteError(const std::vector<uint8_t>& bytes,
                       const std::string& why) {
  try {
    decodeEndpoints(bytes);
    ADD_FAILURE() << why << ": decoded without error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclRemoteError) << why << ": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << why << ": threw a non-mcl exception: " << e.what();
  }
}

TEST(EndpointWireTest, TruncatedOrTrailingBytesThrowRemoteError) {
  auto bytes = encodeEndpoints(kA);
  for (size_t n = 0; n < bytes.size(); ++n)
    expectRemoteError({bytes.begin(), bytes.begin() + n},
                      "truncated to " + std::to_string(n));
  bytes.push_back(0);
  expectRemoteError(bytes, "trailing byte");
}

std::vector<uint8_t> oneEntry(const std::string& host, uint32_t port,
                              uint32_t count = 1) {
  WireWriter w;
  w.u32(count);
  w.str("en0");
  w.str(host);
  w.u32(port);
  w.u32(24);
  w.u8(0);
  w.u8(1);
  return w.take();
}

TEST(EndpointWireTest, MalformedFieldsThrowRemoteError) {
  EXPECT_NO_THROW(decodeEndpoints(oneEntry("10.0.0.1", 80)));
  expectRemoteError(oneEntry("not-an-address", 80), "bad host");
  expectRemoteError(oneEntry("", 80), "empty host");
  expectRemoteError(oneEntry("10.0.0.1", 70000), "port out of range");
  expectRemoteError(oneEntry("10.0.0.1", 0xffffffffu), "port -1");
  expectRemoteError(oneEntry(std::string(100, '1'), 80), "long host");
  expectRemoteError(oneEntry("10.0.0.1", 80, 2), "count too high");
  expectRemoteError(oneEntry("10.0.0.1", 80, 0xffffffffu), "huge count");
  expectRemoteError(oneEntry("10.0.0.1", 80, 0), "count too low");
}

TEST(EndpointWireTest, GarbageNeverCrashes) {
  std::mt19937 rng(12345);
  auto valid = encodeEndpoints(kA);
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> bytes = valid;
    if (round % 2 == 0) {
      bytes.resize(rng() % 64);
      for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    } else {
      for (int k = 0; k < 3; ++k)
        bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    }
    try {
      decodeEndpoints(bytes);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), mclRemoteError) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "round " << round << ": non-mcl exception " << e.what();
    }
  }
}

// ---- platform::sameSubnet / listInterfaces ----

TEST(SubnetTest, PrefixesAndFamilies) {
  const struct {
    const char *a, *b;
    int prefix;
    bool same;
  } cases[] = {
      {"1.2.3.4", "200.9.9.9", 0, true},
      {"10.0.0.1", "10.0.0.2", 32, false},
      {"10.0.0.0", "10.0.0.1", 31, true},
      {"10.0.0.1", "10.0.0.2", 31, false},
      {"10.0.0.1", "10.0.0.2", 30, true},
      {"10.0.0.2", "10.0.0.5", 30, false},
      {"172.16.16.1", "172.16.31.254", 20, true},
      {"172.16.15.1", "172.16.16.1", 20, false},
      {"192.168.1.10", "192.168.2.10", 24, false},
      {"128.0.0.0", "255.255.255.255", 1, true},
      {"10.0.0.1", "10.0.0.1", 33, false},
      {"10.0.0.1", "10.0.0.1", -1, false},
      {"10.0.0.1", "::ffff:10.0.0.1", 0, false},
      {"fd00:1::1", "fd00:1::2", 126, true},
      {"fd00:1::3", "fd00:1::4", 126, false},
      {"2001:db8::1", "2001:db8::ffff:1", 64, true},
      {"2001:db8:abcd::1", "2001:db8:abcf::1", 46, true},
      {"2001:db8:abcd::1", "2001:db8:abcf::1", 47, false},
      {"::1", "::2", 128, false},
      {"::1", "::1", 129, false},
  };
  for (const auto& c : cases) {
    auto a = SocketAddress::fromNumeric(c.a, 0);
    auto b = SocketAddress::fromNumeric(c.b, 9);  // ports do not matter
    EXPECT_EQ(platform::sameSubnet(a, b, c.prefix), c.same)
        << c.a << " " << c.b << " /" << c.prefix;
    EXPECT_EQ(platform::sameSubnet(b, a, c.prefix), c.same)
        << c.b << " " << c.a << " /" << c.prefix;
  }
}

TEST(InterfaceTest, ListsLoopback) {
  auto list = platform::listInterfaces();
  bool found = false;
  for (const auto& n : list) {
    EXPECT_FALSE(n.name.empty());
    int family = n.address.storage.ss_family;
    EXPECT_TRUE(family == AF_INET || family == AF_INET6) << n.name;
    EXPECT_EQ(n.address.port(), 0) << n.name;
    if (n.address.host() == "127.0.0.1") {
      found = true;
      EXPECT_TRUE(n.loopback) << n.name;
      EXPECT_EQ(n.prefixLength, 8) << n.name;
    }
  }
  EXPECT_TRUE(found) << "no 127.0.0.1 among " << list.size() << " addresses";
}

}  // namespace
}  // namespace mcl::transport::tcp
