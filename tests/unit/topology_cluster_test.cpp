// Building the cluster picture from host inventories (topology/cluster.h):
// cables matched by subnet and by Thunderbolt port UUID, shared networks,
// wires of doubled pairs, and the shape of the cabling.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include "topology/cluster.h"
#include "topology_inventory_builders.h"

namespace mcl::topology {
namespace {

using mcl::testing::addAddress;
using mcl::testing::addressCables;
using mcl::testing::cable;
using mcl::testing::macInventories;
using mcl::testing::makeHosts;
using mcl::testing::makeInterface;
using mcl::testing::makePort;
using mcl::testing::mesh4Cables;
using mcl::testing::oneRankEach;

Cluster build(const std::vector<HostInventory>& hosts) {
  return buildCluster(hosts, oneRankEach(hosts.size()));
}

void expectEnd(const LinkEnd& e, int host, const std::string& interface,
               const std::string& address) {
  EXPECT_EQ(e.host, host);
  EXPECT_EQ(e.interface, interface);
  EXPECT_EQ(e.address, address);
}

// Link `l` is the /30 cable 10.77.<net>.0/30 made by mcl::testing::cable.
void expectSubnetLink(const ClusterLink& l, int a, const std::string& ifA,
                      int b, const std::string& ifB, int net,
                      const std::string& kind = "ethernet") {
  std::string base = "10.77." + std::to_string(net) + ".";
  SCOPED_TRACE("link " + std::to_string(a) + ":" + ifA + " - " +
               std::to_string(b) + ":" + ifB);
  expectEnd(l.a, a, ifA, base + "1");
  expectEnd(l.b, b, ifB, base + "2");
  EXPECT_EQ(l.subnet, base + "0/30");
  EXPECT_EQ(l.kind, kind);
  EXPECT_EQ(l.matchedBy, "subnet");
}

TEST(ClusterTest, PairWithOneCable) {
  auto hosts = makeHosts(2);
  cable(hosts, 0, "eth1", 1, "eth2", 5);
  addAddress(hosts[0], "eth0", "192.168.1.10", 24);  // a LAN h1 is not on
  Cluster c = buildCluster(hosts, {{0, 2}, {1}});
  ASSERT_EQ(c.hosts.size(), 2u);
  EXPECT_EQ(c.hosts[0].name, "h0");
  EXPECT_EQ(c.hosts[0].identity, "id-h0");
  EXPECT_EQ(c.hosts[0].ranks, (std::vector<int>{0, 2}));
  EXPECT_TRUE(c.hosts[1].hasInventory);
  EXPECT_EQ(c.hostOfRank(2), 0);
  EXPECT_EQ(c.hostOfRank(1), 1);
  EXPECT_EQ(c.hostOfRank(3), -1);
  ASSERT_EQ(c.links.size(), 1u);
  expectSubnetLink(c.links[0], 0, "eth1", 1, "eth2", 5);
  EXPECT_EQ(c.links[0].wire, 0);
  EXPECT_EQ(c.cablesBetween(1, 0), 1);
  EXPECT_TRUE(c.networks.empty());
  EXPECT_EQ(c.shape, "pair");
  EXPECT_EQ(c.source, "detected");
}

// One wire with an IPv4 /30 and an IPv6 /126 is still one cable.
TEST(ClusterTest, DualStackCableIsOneCable) {
  auto hosts = makeHosts(2);
  cable(hosts, 0, "eth1", 1, "eth2", 5);
  addAddress(hosts[0], "eth1", "fd00:5::1", 126);
  addAddress(hosts[1], "eth2", "fd00:5::2", 126);
  Cluster c = buildCluster(hosts, oneRankEach(2));
  ASSERT_EQ(c.links.size(), 1u);
  EXPECT_EQ(c.links[0].subnet, "10.77.5.0/30");
  EXPECT_EQ(c.cablesBetween(0, 1), 1);
}

// A cable matched by port UUID whose far end's interface is unknown (its
// host's networksetup failed) takes the interface from the subnet both
// ends share, instead of counting the wire twice.
TEST(ClusterTest, SubnetFillsTheUnknownEndOfAThunderboltCable) {
  auto hosts = makeHosts(2);
  hosts[0].thunderboltPorts.push_back(makePort("A1", 1, 5, {"B2"}));
  hosts[1].thunderboltPorts.push_back(makePort("B2", 2, 5, {"A1"}));
  hosts[0].interfaces.push_back(makeInterface(
      "en2", "thunderbolt", true, {{"10.77.1.1", 30}}, /*receptacle=*/1));
  // Host 1 knows its interface but not which port it belongs to.
  addAddress(hosts[1], "en5", "10.77.1.2", 30);
  Cluster c = buildCluster(hosts, oneRankEach(2));
  ASSERT_EQ(c.links.size(), 1u);
  EXPECT_EQ(c.links[0].matchedBy, "port_uuid");
  EXPECT_EQ(c.links[0].a.interface, "en2");
  EXPECT_EQ(c.links[0].b.interface, "en5");
  EXPECT_EQ(c.links[0].b.address, "10.77.1.2");
  EXPECT_EQ(c.links[0].subnet, "10.77.1.0/30");
}

TEST(ClusterTest, PairWithTwoCablesHasTwoWires) {
  auto hosts = makeHosts(2);
  // Listed in the opposite order to their wires.
  cable(hosts, 0, "eth2", 1, "eth1", 8);
  cable(hosts, 0, "eth1", 1, "eth2", 9);
  Cluster c = build(hosts);
  ASSERT_EQ(c.links.size(), 2u);
  expectSubnetLink(c.links[0], 0, "eth1", 1, "eth2", 9);
  expectSubnetLink(c.links[1], 0, "eth2", 1, "eth1", 8);
  EXPECT_EQ(c.links[0].wire, 0);
  EXPECT_EQ(c.links[1].wire, 1);
  EXPECT_EQ(c.cablesBetween(0, 1), 2);
  EXPECT_EQ(c.shape, "pair");
}

TEST(ClusterTest, RingOfThree) {
  auto hosts = makeHosts(3);
  cable(hosts, 0, "en2", 1, "en3", 1, "thunderbolt");
  cable(hosts, 1, "en2", 2, "en3", 2, "thunderbolt");
  cable(hosts, 0, "en3", 2, "en2", 3, "thunderbolt");
  Cluster c = build(hosts);
  ASSERT_EQ(c.links.size(), 3u);
  expectSubnetLink(c.links[0], 0, "en2", 1, "en3", 1, "thunderbolt");
  expectSubnetLink(c.links[1], 0, "en3", 2, "en2", 3, "thunderbolt");
  expectSubnetLink(c.links[2], 1, "en2", 2, "en3", 2, "thunderbolt");
  EXPECT_EQ(c.shape, "ring");
}

TEST(ClusterTest, RingOfFour) {
  auto hosts = makeHosts(4);
  for (int h = 0; h < 4; ++h) cable(hosts, h, "eth1", (h + 1) % 4, "eth2", h);
  Cluster c = build(hosts);
  ASSERT_EQ(c.links.size(), 4u);
  // 3 -> 0 is stored with the lower host first.
  expectEnd(c.links[1].a, 0, "eth2", "10.77.3.2");
  expectEnd(c.links[1].b, 3, "eth1", "10.77.3.1");
  EXPECT_EQ(c.cablesBetween(0, 2), 0);
  EXPECT_EQ(c.cablesBetween(1, 3), 0);
  EXPECT_EQ(c.shape, "ring");
}

TEST(ClusterTest, FullMeshOfFourWithADoubledPair) {
  auto hosts = makeHosts(4);
  int net = 1;
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j)
      cable(hosts, i, "p" + std::to_string(j), j, "p" + std::to_string(i),
            net++);
  cable(hosts, 1, "q2", 2, "q1", net);  // second 1-2 cable
  Cluster c = build(hosts);
  ASSERT_EQ(c.links.size(), 7u);
  EXPECT_EQ(c.shape, "full_mesh");
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j)
      EXPECT_EQ(c.cablesBetween(i, j), i == 1 && j == 2 ? 2 : 1) << i << j;
  expectSubnetLink(c.links[0], 0, "p1", 1, "p0", 1);
  expectSubnetLink(c.links[3], 1, "p2", 2, "p1", 4);
  expectSubnetLink(c.links[4], 1, "q2", 2, "q1", 7);
  EXPECT_EQ(c.links[3].wire, 0);
  EXPECT_EQ(c.links[4].wire, 1);
  expectSubnetLink(c.links[6], 2, "p3", 3, "p2", 6);
}

TEST(ClusterTest, LineOfThree) {
  auto hosts = makeHosts(3);
  cable(hosts, 0, "eth1", 1, "eth1", 1);
  cable(hosts, 1, "eth2", 2, "eth1", 2);
  Cluster c = build(hosts);
  ASSERT_EQ(c.links.size(), 2u);
  expectSubnetLink(c.links[1], 1, "eth2", 2, "eth1", 2);
  EXPECT_EQ(c.shape, "line");
}

TEST(ClusterTest, StarOfFour) {
  auto hosts = makeHosts(4);
  for (int h = 1; h < 4; ++h)
    cable(hosts, 0, "eth" + std::to_string(h), h, "eth0", h);
  Cluster c = build(hosts);
  ASSERT_EQ(c.links.size(), 3u);
  expectSubnetLink(c.links[2], 0, "eth3", 3, "eth0", 3);
  EXPECT_EQ(c.shape, "star");
}

TEST(ClusterTest, SharedLanIsANetworkNotCables) {
  auto hosts = makeHosts(3);
  for (int h = 0; h < 3; ++h)
    addAddress(hosts[size_t(h)], "en0", "192.168.1." + std::to_string(10 + h),
               24, "wifi");
  Cluster c = build(hosts);
  EXPECT_TRUE(c.links.empty());
  ASSERT_EQ(c.networks.size(), 1u);
  const ClusterNetwork& n = c.networks[0];
  EXPECT_EQ(n.subnet, "192.168.1.0/24");
  EXPECT_EQ(n.medium, "wifi");
  ASSERT_EQ(n.members.size(), 3u);
  for (int h = 0; h < 3; ++h) {
    EXPECT_EQ(n.members[size_t(h)].host, h);
    EXPECT_EQ(n.members[size_t(h)].interface, "en0");
    EXPECT_EQ(n.members[size_t(h)].address,
              "192.168.1." + std::to_string(10 + h));
  }
  EXPECT_EQ(c.shape, "lan");
}

TEST(ClusterTest, TwoHostsOnALanAreNotCabled) {
  // Two ends in a /24 are a switch, not a cable; nor is a /30 over Wi-Fi.
  auto hosts = makeHosts(2);
  addAddress(hosts[0], "eth0", "10.1.0.1", 24);
  addAddress(hosts[1], "eth0", "10.1.0.2", 24);
  addAddress(hosts[0], "en1", "10.2.0.1", 30, "wifi");
  addAddress(hosts[1], "en1", "10.2.0.2", 30, "wifi");
  Cluster c = build(hosts);
  EXPECT_TRUE(c.links.empty());
  ASSERT_EQ(c.networks.size(), 2u);
  EXPECT_EQ(c.networks[0].subnet, "10.1.0.0/24");
  EXPECT_EQ(c.networks[1].subnet, "10.2.0.0/30");
  EXPECT_EQ(c.shape, "lan");
}

TEST(ClusterTest, DownAndLoopbackInterfacesAreIgnored) {
  auto hosts = makeHosts(2);
  hosts[0].interfaces.push_back(
      makeInterface("eth1", "ethernet", false, {{"10.5.0.1", 30}}));
  addAddress(hosts[1], "eth1", "10.5.0.2", 30);
  addAddress(hosts[0], "lo", "127.0.0.1", 8, "loopback");
  addAddress(hosts[1], "lo", "127.0.0.1", 8, "loopback");
  Cluster c = build(hosts);
  EXPECT_TRUE(c.links.empty());
  EXPECT_TRUE(c.networks.empty());
  EXPECT_EQ(c.shape, "partial");
}

TEST(ClusterTest, DisconnectedPairsArePartial) {
  auto hosts = makeHosts(4);
  cable(hosts, 0, "eth1", 1, "eth1", 1);
  cable(hosts, 2, "eth1", 3, "eth1", 2);
  Cluster c = build(hosts);
  ASSERT_EQ(c.links.size(), 2u);
  expectSubnetLink(c.links[1], 2, "eth1", 3, "eth1", 2);
  EXPECT_EQ(c.shape, "partial");
}

TEST(ClusterTest, SingleHost) {
  auto hosts = makeHosts(1);
  addAddress(hosts[0], "eth0", "10.0.0.1", 30);
  Cluster c = buildCluster(hosts, {{0, 1, 2, 3}});
  ASSERT_EQ(c.hosts.size(), 1u);
  EXPECT_EQ(c.hosts[0].ranks.size(), 4u);
  EXPECT_TRUE(c.links.empty());
  EXPECT_TRUE(c.networks.empty());
  EXPECT_EQ(c.shape, "single");
}

TEST(ClusterTest, LinkLocalAddressesMakeNoCablesOrNetworks) {
  auto hosts = makeHosts(3);
  for (int h = 0; h < 3; ++h) {
    std::string n = std::to_string(h + 1);
    addAddress(hosts[size_t(h)], "en2", "169.254.7." + n, 16, "thunderbolt");
    addAddress(hosts[size_t(h)], "en2", "fe80::" + n, 64, "thunderbolt");
  }
  // Even a point-to-point prefix in 169.254/16 says nothing.
  addAddress(hosts[0], "en3", "169.254.9.1", 30, "thunderbolt");
  addAddress(hosts[1], "en3", "169.254.9.2", 30, "thunderbolt");
  Cluster c = build(hosts);
  EXPECT_TRUE(c.links.empty());
  EXPECT_TRUE(c.networks.empty());
  EXPECT_EQ(c.shape, "partial");
}

TEST(ClusterTest, Ipv6PointToPointCable) {
  auto hosts = makeHosts(2);
  addAddress(hosts[0], "eth1", "fd00:77::1", 127);
  addAddress(hosts[1], "eth1", "fd00:77::", 127);
  Cluster c = build(hosts);
  ASSERT_EQ(c.links.size(), 1u);
  expectEnd(c.links[0].a, 0, "eth1", "fd00:77::1");
  expectEnd(c.links[0].b, 1, "eth1", "fd00:77::");
  EXPECT_EQ(c.links[0].subnet, "fd00:77::/127");
}

// ---- Thunderbolt, matched by port UUID (macos fixtures) ------------------

TEST(ClusterTest, MacMeshMatchedByPortUuid) {
  auto hosts = macInventories("mesh4", 4);
  // Addresses on three cables only; the second 0-1 cable has none.
  auto cables = mesh4Cables();
  cables.erase(cables.begin() + 1);
  cables.resize(3);
  addressCables(hosts, cables);
  Cluster c = build(hosts);
  ASSERT_EQ(c.links.size(), 7u);
  EXPECT_EQ(c.shape, "full_mesh");
  EXPECT_EQ(c.cablesBetween(0, 1), 2);
  const int receptacleA[] = {1, 4, 2, 3, 2, 4, 2};
  const int receptacleB[] = {3, 1, 1, 2, 3, 1, 3};
  for (size_t k = 0; k < 7; ++k) {
    const ClusterLink& l = c.links[k];
    const auto& want = mesh4Cables()[k];
    SCOPED_TRACE("link " + std::to_string(k));
    EXPECT_EQ(l.a.host, want.a);
    EXPECT_EQ(l.a.interface, want.ifA);
    EXPECT_EQ(l.a.receptacle, receptacleA[k]);
    EXPECT_EQ(l.b.host, want.b);
    EXPECT_EQ(l.b.interface, want.ifB);
    EXPECT_EQ(l.b.receptacle, receptacleB[k]);
    EXPECT_EQ(l.kind, "thunderbolt");
    EXPECT_EQ(l.matchedBy, "port_uuid");
    EXPECT_EQ(l.speedGbps, 80);
    EXPECT_EQ(l.generation, 5);
    EXPECT_EQ(l.wire, k == 1 ? 1 : 0);
  }
  // Addressed cables: mesh4Cables()[0], [2], [3] got 10.77.1-3.0/30.
  EXPECT_EQ(c.links[0].a.address, "10.77.1.1");
  EXPECT_EQ(c.links[0].b.address, "10.77.1.2");
  EXPECT_EQ(c.links[0].subnet, "10.77.1.0/30");
  EXPECT_EQ(c.links[3].subnet, "10.77.3.0/30");
  EXPECT_EQ(c.links[1].a.address, "");
  EXPECT_EQ(c.links[1].subnet, "");
  EXPECT_TRUE(c.networks.empty());
}

TEST(ClusterTest, MacMeshDoesNotDependOnPortOrder) {
  auto hosts = macInventories("mesh4", 4);
  addressCables(hosts, mesh4Cables());
  Cluster expected = build(hosts);
  std::mt19937 rng(7);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(hosts[1].thunderboltPorts.begin(),
                 hosts[1].thunderboltPorts.end(), rng);
    std::shuffle(hosts[1].interfaces.begin(), hosts[1].interfaces.end(), rng);
    Cluster c = build(hosts);
    ASSERT_EQ(c.links.size(), expected.links.size());
    for (size_t k = 0; k < c.links.size(); ++k) {
      const ClusterLink& x = c.links[k];
      const ClusterLink& y = expected.links[k];
      EXPECT_EQ(x.a.host, y.a.host);
      EXPECT_EQ(x.a.interface, y.a.interface);
      EXPECT_EQ(x.a.receptacle, y.a.receptacle);
      EXPECT_EQ(x.b.host, y.b.host);
      EXPECT_EQ(x.b.interface, y.b.interface);
      EXPECT_EQ(x.b.address, y.b.address);
      EXPECT_EQ(x.wire, y.wire);
      EXPECT_EQ(x.subnet, y.subnet);
    }
    EXPECT_EQ(c.shape, "full_mesh");
  }
}

TEST(ClusterTest, MacMeshWithoutNetworksetupStillHasCables) {
  auto hosts = macInventories("mesh4", 4);
  for (auto& h : hosts) h.interfaces.clear();
  Cluster c = build(hosts);
  ASSERT_EQ(c.links.size(), 7u);
  EXPECT_EQ(c.links[0].a.interface, "");
  EXPECT_EQ(c.links[0].a.receptacle, 1);
  EXPECT_EQ(c.links[0].b.receptacle, 3);
  EXPECT_EQ(c.shape, "full_mesh");
}

TEST(ClusterTest, MacRingOfFour) {
  auto hosts = macInventories("ring4", 4);
  Cluster c = build(hosts);
  ASSERT_EQ(c.links.size(), 4u);
  EXPECT_EQ(c.shape, "ring");
  EXPECT_EQ(c.cablesBetween(0, 1), 1);
  EXPECT_EQ(c.cablesBetween(0, 3), 1);
  EXPECT_EQ(c.cablesBetween(0, 2), 0);
  EXPECT_EQ(c.cablesBetween(1, 3), 0);
  for (const ClusterLink& l : c.links) EXPECT_EQ(l.matchedBy, "port_uuid");
  EXPECT_EQ(c.links[1].a.interface, "en3");  // mac0 Thunderbolt 2
  EXPECT_EQ(c.links[1].b.host, 3);
  EXPECT_EQ(c.links[1].b.interface, "en2");  // mac3 Thunderbolt 1
}

TEST(ClusterTest, ThunderboltCableIsNotCountedTwice) {
  // Port UUIDs and a shared /30 both describe the one cable.
  auto hosts = makeHosts(2);
  hosts[0].thunderboltPorts = {makePort("A1", 1, 5, {"B2"})};
  hosts[1].thunderboltPorts = {makePort("B2", 2, 4, {"A1"})};
  hosts[0].interfaces.push_back(
      makeInterface("en2", "thunderbolt", true, {{"10.9.0.1", 30}}, 1));
  hosts[1].interfaces.push_back(makeInterface(
      "en3", "thunderbolt", true, {{"fd00::1", 64}, {"10.9.0.2", 30}}, 2));
  Cluster c = build(hosts);
  ASSERT_EQ(c.links.size(), 1u);
  EXPECT_EQ(c.links[0].matchedBy, "port_uuid");
  expectEnd(c.links[0].a, 0, "en2", "10.9.0.1");
  expectEnd(c.links[0].b, 1, "en3", "10.9.0.2");  // IPv4 preferred
  EXPECT_EQ(c.links[0].subnet, "10.9.0.0/30");
  EXPECT_EQ(c.links[0].speedGbps, 40);  // the slower end
  EXPECT_EQ(c.links[0].generation, 4);
}

TEST(ClusterTest, ClassifyShapeIgnoresLinksToUnknownHosts) {
  Cluster c;
  c.hosts.resize(2);
  ClusterLink bad;
  bad.a.host = 0;
  bad.b.host = 5;
  c.links.push_back(bad);
  EXPECT_EQ(classifyShape(c), "partial");
  c.links[0].b.host = 1;
  EXPECT_EQ(classifyShape(c), "pair");
}

}  // namespace
}  // namespace mcl::topology
