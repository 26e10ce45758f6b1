// Matching Thunderbolt cables across hosts by port identity
// (topology/cables.h) on the mesh, ring and hub fixtures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "topology/cables.h"
#include "topology/networksetup.h"
#include "topology/thunderbolt_macos.h"
#include "topology_fixtures.h"

namespace mcl::topology {
namespace {

using mcl::testing::expectInvalid;
using mcl::testing::readFixture;

std::vector<HostThunderbolt> loadHosts(const std::string& dir, int count,
                                       bool withNetworksetup) {
  std::vector<HostThunderbolt> hosts;
  for (int h = 0; h < count; ++h) {
    std::string base = "macos/" + dir + "/mac" + std::to_string(h);
    HostThunderbolt host;
    host.ports = parseSystemProfilerThunderbolt(readFixture(base + ".json"));
    if (withNetworksetup) {
      host.devices =
          parseNetworksetupPorts(readFixture(base + ".networksetup.txt"))
              .thunderbolt;
    }
    hosts.push_back(std::move(host));
  }
  return hosts;
}

struct End {
  int host;
  int receptacle;
  const char* device;
};

void expectCable(const Cable& c, End a, End b) {
  EXPECT_EQ(c.a.host, a.host);
  EXPECT_EQ(c.a.receptacle, a.receptacle);
  EXPECT_EQ(c.a.device, a.device);
  EXPECT_EQ(c.b.host, b.host);
  EXPECT_EQ(c.b.receptacle, b.receptacle);
  EXPECT_EQ(c.b.device, b.device);
}

TEST(CablesTest, MeshOfFourHasSevenCablesOnePairDoubled) {
  auto cables = findCables(loadHosts("mesh4", 4, true));
  ASSERT_EQ(cables.size(), 7u);
  // mac0/mac1 are cabled twice, and the two Macs list those cables in
  // different orders (mac0: receptacles 1, 4; mac1: 1, 3): matching by UUID
  // pairs receptacle 1 with 3 and 4 with 1.
  expectCable(cables[0], {0, 1, "en2"}, {1, 3, "en4"});
  expectCable(cables[1], {0, 4, "en5"}, {1, 1, "en2"});
  expectCable(cables[2], {0, 2, "en3"}, {2, 1, "en3"});
  expectCable(cables[3], {0, 3, "en4"}, {3, 2, "en3"});
  expectCable(cables[4], {1, 2, "en3"}, {2, 3, "en5"});
  expectCable(cables[5], {1, 4, "en5"}, {3, 1, "en2"});
  expectCable(cables[6], {2, 2, "en4"}, {3, 3, "en4"});
  EXPECT_EQ(cables[0].a.portUuid, "3F20A100-7C1E-4B2A-9D3F-A0B1C2D30001");
  EXPECT_EQ(cables[0].b.portUuid, "3F20B211-7C1E-4B2A-9D3F-A0B1C2D30003");

  auto pairs = cablesPerPair(cables);
  ASSERT_EQ(pairs.size(), 6u);
  EXPECT_EQ(pairs.at({0, 1}), 2);
  for (auto [i, j] : {std::pair{0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}) {
    EXPECT_EQ(pairs.at({i, j}), 1) << i << "-" << j;
  }
}

TEST(CablesTest, DrivesAndMacsOutsideTheJobAreNotCables) {
  // mac0 has a drive on receptacle 5; mac3 a foreign Mac on receptacle 4.
  auto cables = findCables(loadHosts("mesh4", 4, false));
  for (const Cable& c : cables) {
    EXPECT_FALSE(c.a.host == 0 && c.a.receptacle == 5);
    EXPECT_FALSE(c.b.host == 3 && c.b.receptacle == 4);
    EXPECT_EQ(c.a.device, "");  // no networksetup given
  }
  EXPECT_EQ(cables.size(), 7u);
}

TEST(CablesTest, ResultDoesNotDependOnPortOrder) {
  auto hosts = loadHosts("mesh4", 4, true);
  auto expected = findCables(hosts);
  for (auto& host : hosts) std::reverse(host.ports.begin(), host.ports.end());
  auto shuffled = findCables(hosts);
  ASSERT_EQ(shuffled.size(), expected.size());
  for (size_t k = 0; k < expected.size(); ++k) {
    EXPECT_EQ(shuffled[k].a.portUuid, expected[k].a.portUuid);
    EXPECT_EQ(shuffled[k].b.portUuid, expected[k].b.portUuid);
  }
}

TEST(CablesTest, SubsetOfHostsKeepsOnlyTheirCables) {
  auto hosts = loadHosts("mesh4", 2, true);  // mac0 and mac1
  auto cables = findCables(hosts);
  ASSERT_EQ(cables.size(), 2u);
  EXPECT_EQ(cablesPerPair(cables).at({0, 1}), 2);
}

TEST(CablesTest, RingOfFourHasFourCables) {
  auto cables = findCables(loadHosts("ring4", 4, true));
  ASSERT_EQ(cables.size(), 4u);
  expectCable(cables[0], {0, 1, "en2"}, {1, 2, "en3"});
  expectCable(cables[1], {0, 2, "en3"}, {3, 1, "en2"});
  expectCable(cables[2], {1, 1, "en2"}, {2, 2, "en3"});
  expectCable(cables[3], {2, 1, "en2"}, {3, 2, "en3"});
  auto pairs = cablesPerPair(cables);
  EXPECT_EQ(pairs.size(), 4u);
  EXPECT_EQ(pairs.count({0, 2}), 0u);
  EXPECT_EQ(pairs.count({1, 3}), 0u);
}

TEST(CablesTest, MacBehindAHubIsNoCable) {
  std::vector<HostThunderbolt> hosts(3);
  hosts[0].ports =
      parseSystemProfilerThunderbolt(readFixture("macos/hub/hub_host.json"));
  hosts[1].ports =
      parseSystemProfilerThunderbolt(readFixture("macos/hub/behind_dock.json"));
  hosts[2].ports =
      parseSystemProfilerThunderbolt(readFixture("macos/hub/direct.json"));
  auto cables = findCables(hosts);
  // hub_host and behind_dock see each other, but only through the dock.
  ASSERT_EQ(cables.size(), 1u);
  EXPECT_EQ(cables[0].a.host, 0);
  EXPECT_EQ(cables[0].a.receptacle, 2);
  EXPECT_EQ(cables[0].b.host, 2);
  EXPECT_EQ(cables[0].b.receptacle, 3);
}

ThunderboltPort port(const std::string& uuid, int receptacle,
                     std::vector<std::string> peers) {
  ThunderboltPort p;
  p.uuid = uuid;
  p.receptacle = receptacle;
  for (auto& u : peers) p.peers.push_back(ThunderboltPeer{u, "Mac", "", 1});
  return p;
}

TEST(CablesTest, OneSidedSightingIsNoCable) {
  // A lists B, but B's port lists nothing (stale entry, half-plugged cable).
  std::vector<HostThunderbolt> hosts(2);
  hosts[0].ports = {port("A1", 1, {"B1"})};
  hosts[1].ports = {port("B1", 1, {})};
  EXPECT_TRUE(findCables(hosts).empty());
}

TEST(CablesTest, CableToItselfIsIgnored) {
  std::vector<HostThunderbolt> hosts(1);
  hosts[0].ports = {port("A1", 1, {"A2"}), port("A2", 2, {"A1"})};
  EXPECT_TRUE(findCables(hosts).empty());
}

TEST(CablesTest, SharedPortUuidIsInvalid) {
  std::vector<HostThunderbolt> hosts(3);
  hosts[0].ports = {port("A1", 1, {})};
  hosts[1].ports = {port("B1", 1, {})};
  hosts[2].ports = {port("A1", 1, {})};
  expectInvalid([&] { findCables(hosts); }, "shared uuid",
                {"A1", "host 0", "host 2"});
}

TEST(CablesTest, NoHostsNoCables) {
  EXPECT_TRUE(findCables({}).empty());
  EXPECT_TRUE(cablesPerPair({}).empty());
}

}  // namespace
}  // namespace mcl::topology
