// Checking a cluster for the usual Mac-cluster mistakes
// (topology/findings.h): Thunderbolt Bridge in a loop, TB4 ports, ports
// without IPv4, RDMA off, traffic that avoids a cable, one-sided cables.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "topology/findings.h"
#include "topology_inventory_builders.h"

namespace mcl::topology {
namespace {

using mcl::testing::addressCables;
using mcl::testing::checked;
using mcl::testing::describe;
using mcl::testing::macInventories;
using mcl::testing::makeHosts;
using mcl::testing::makeInterface;
using mcl::testing::makePort;
using mcl::testing::mesh4Cables;
using mcl::testing::oneRankEach;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Hosts h0.. cabled by Thunderbolt as `pairs` says: cable k uses port
// receptacle r (1, 2, ... per host) and interface en<r+1> at each end, and,
// with `ipv4`, the subnet 10.77.<k+1>.0/30.
std::vector<HostInventory> thunderboltHosts(
    int n, const std::vector<std::pair<int, int>>& pairs, int generation = 5,
    bool ipv4 = true) {
  auto hosts = makeHosts(n);
  std::vector<int> used(size_t(n), 0);
  for (size_t k = 0; k < pairs.size(); ++k) {
    int ends[2] = {pairs[k].first, pairs[k].second};
    int rec[2] = {++used[size_t(ends[0])], ++used[size_t(ends[1])]};
    for (int s = 0; s < 2; ++s) {
      auto uuid = [&](int side) {
        return "H" + std::to_string(ends[side]) + "P" +
               std::to_string(rec[side]);
      };
      HostInventory& h = hosts[size_t(ends[s])];
      h.thunderboltDetected = true;
      h.thunderboltPorts.push_back(
          makePort(uuid(s), rec[s], generation, {uuid(1 - s)}));
      std::vector<InterfaceAddress> addresses;
      if (ipv4)
        addresses.push_back(
            {"10.77." + std::to_string(k + 1) + "." + std::to_string(s + 1),
             30});
      h.interfaces.push_back(makeInterface("en" + std::to_string(rec[s] + 1),
                                           "thunderbolt", true, addresses,
                                           rec[s]));
    }
  }
  return hosts;
}

TEST(FindingsTest, BridgeInARingIsAnError) {
  auto hosts = thunderboltHosts(3, {{0, 1}, {1, 2}, {0, 2}});
  hosts[1].bridgeActive = true;
  hosts[1].bridgeDevice = "bridge0";
  Cluster c = checked(hosts);
  ASSERT_EQ(c.shape, "ring");
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  const Finding& f = c.findings[0];
  EXPECT_EQ(f.severity, "error");
  EXPECT_TRUE(contains(f.what, "Thunderbolt Bridge")) << f.what;
  EXPECT_TRUE(contains(f.what, "host 1 (h1)")) << f.what;
  EXPECT_TRUE(contains(f.fix, "ifconfig bridge0 down")) << f.fix;
  EXPECT_TRUE(hasErrors(c));
}

TEST(FindingsTest, BridgeInAPairWithOneCableIsAWarning) {
  auto hosts = thunderboltHosts(2, {{0, 1}});
  hosts[0].bridgeActive = true;
  hosts[0].bridgeDevice = "bridge0";
  Cluster c = checked(hosts);
  ASSERT_EQ(c.links.size(), 1u);
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  EXPECT_EQ(c.findings[0].severity, "warning");
  EXPECT_TRUE(contains(c.findings[0].what, "Thunderbolt Bridge"));
  EXPECT_TRUE(contains(c.findings[0].what, "host 0 (h0)"));
  EXPECT_FALSE(hasErrors(c));
}

// Two cables between two Macs are a loop for a bridge: an error.
TEST(FindingsTest, BridgeOnADoubledPairIsAnError) {
  auto hosts = thunderboltHosts(2, {{0, 1}, {0, 1}});
  hosts[1].bridgeActive = true;
  hosts[1].bridgeDevice = "bridge0";
  Cluster c = checked(hosts);
  ASSERT_EQ(c.links.size(), 2u);
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  EXPECT_EQ(c.findings[0].severity, "error");
  EXPECT_TRUE(contains(c.findings[0].what, "in a loop"));
  EXPECT_TRUE(contains(c.findings[0].what, "host 1 (h1)"));
}

TEST(FindingsTest, BridgeOnAnUncabledHostSaysNothing) {
  auto hosts = thunderboltHosts(3, {{0, 1}});
  hosts[2].bridgeActive = true;
  hosts[2].bridgeDevice = "bridge0";
  EXPECT_TRUE(checked(hosts).findings.empty());
}

TEST(FindingsTest, Thunderbolt4IsInfoUnlessRdmaIsWanted) {
  auto hosts = thunderboltHosts(2, {{0, 1}}, 4);
  Cluster c = checked(hosts);
  ASSERT_EQ(c.links.size(), 1u);
  ASSERT_EQ(c.links[0].generation, 4);
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  EXPECT_EQ(c.findings[0].severity, "info");
  EXPECT_TRUE(contains(c.findings[0].what, "Thunderbolt 4"));
  EXPECT_TRUE(
      contains(c.findings[0].what, "host 0 (h0) en2 <-> host 1 (h1) en2"))
      << c.findings[0].what;
  EXPECT_FALSE(hasErrors(c));
  Cluster r = checked(hosts, true);
  ASSERT_EQ(r.findings.size(), 1u) << describe(r);
  EXPECT_EQ(r.findings[0].severity, "error");
  EXPECT_TRUE(hasErrors(r));
}

TEST(FindingsTest, ThunderboltPortWithoutIpv4) {
  auto hosts = thunderboltHosts(2, {{0, 1}}, 5, false);
  hosts[1].interfaces[0].addresses = {{"fd00::2", 64}};  // IPv6 only
  for (bool rdma : {false, true}) {
    Cluster c = checked(hosts, rdma);
    ASSERT_EQ(c.findings.size(), 2u) << describe(c);  // both ends
    for (const Finding& f : c.findings) {
      // No subnet in common: TCP cannot use the cable either.
      EXPECT_EQ(f.severity, "error");
      EXPECT_TRUE(contains(f.what, "no IPv4")) << f.what;
      EXPECT_TRUE(contains(f.fix, "Thunderbolt 1")) << f.fix;
      EXPECT_TRUE(contains(f.fix, "en2")) << f.fix;
    }
    EXPECT_TRUE(contains(c.findings[0].what, "host 0 (h0) en2"));
    EXPECT_TRUE(contains(c.findings[1].what, "host 1 (h1) en2"));
  }
}

TEST(FindingsTest, ThunderboltPortWithoutInterface) {
  auto hosts = thunderboltHosts(2, {{0, 1}, {0, 1}});
  hosts[1].interfaces.erase(hosts[1].interfaces.begin() + 1);  // port 2
  Cluster c = checked(hosts);
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  EXPECT_EQ(c.findings[0].severity, "warning");
  EXPECT_TRUE(contains(c.findings[0].what, "host 1 (h1) Thunderbolt 2"));
  EXPECT_TRUE(contains(c.findings[0].fix, "Thunderbolt 2"));
}

TEST(FindingsTest, RdmaDisabledOnACabledHost) {
  auto hosts = thunderboltHosts(3, {{0, 1}});
  hosts[1].rdmaState = "disabled";
  hosts[2].rdmaState = "disabled";  // no cable: RDMA is moot
  for (bool rdma : {false, true}) {
    Cluster c = checked(hosts, rdma);
    ASSERT_EQ(c.findings.size(), 1u) << describe(c);
    EXPECT_EQ(c.findings[0].severity, rdma ? "error" : "info");
    EXPECT_TRUE(contains(c.findings[0].what, "host 1 (h1)"));
    EXPECT_TRUE(contains(c.findings[0].fix, "rdma_ctl enable"));
  }
}

TEST(FindingsTest, NoRdmaDevicesWhenWanted) {
  auto hosts = thunderboltHosts(2, {{0, 1}});
  hosts[0].rdmaState = "enabled";  // but no device
  hosts[1].rdmaState = "enabled";
  hosts[1].rdmaDevices = {{"rdma_en2", "en2", true}};
  EXPECT_TRUE(checked(hosts).findings.empty());
  Cluster c = checked(hosts, true);
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  EXPECT_EQ(c.findings[0].severity, "error");
  EXPECT_TRUE(contains(c.findings[0].what, "no RDMA devices on host 0"));
}

TEST(FindingsTest, TrafficThatAvoidsTheCable) {
  auto hosts = thunderboltHosts(3, {{0, 1}});
  Cluster c = buildCluster(hosts, {{0, 3}, {1, 4}, {2}});
  c.paths = {{0, 3, "shm", "", {}, "", ""},
             {0, 1, "tcp", "lan", {"en0>en0"}, "", ""},
             {3, 4, "tcp", "lan", {"en0>en0"}, "", ""},  // same host pair again
             {0, 2, "tcp", "lan", {"en0>en0"}, "", ""},  // no cable to host 2
             {1, 3, "tcp", "cable", {"en2>en2"}, "", ""}};
  addFindings(c, {});
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  const Finding& f = c.findings[0];
  EXPECT_EQ(f.severity, "error");  // the job runs several times slower
  EXPECT_TRUE(contains(f.what,
                       "host 0 (h0) and host 1 (h1) are cabled "
                       "(en2<->en2), but their traffic takes lan "
                       "en0>en0"))
      << f.what;
  EXPECT_EQ(f.pairs, (std::vector<std::pair<int, int>>{{0, 1}}));
}

TEST(FindingsTest, OneSidedCableIsAnError) {
  auto hosts = makeHosts(2);
  hosts[0].thunderboltPorts = {makePort("A1", 1, 5, {"B1"})};
  hosts[1].thunderboltPorts = {makePort("B1", 1, 5, {})};
  Cluster c = checked(hosts);
  EXPECT_TRUE(c.links.empty());
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  EXPECT_EQ(c.findings[0].severity, "error");
  EXPECT_TRUE(contains(c.findings[0].what,
                       "host 0 (h0) counts 1 cable(s) to host 1 (h1), which "
                       "counts 0 back"))
      << c.findings[0].what;
  // Seen from the higher host only.
  std::swap(hosts[0].thunderboltPorts, hosts[1].thunderboltPorts);
  c = checked(hosts);
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  EXPECT_TRUE(contains(c.findings[0].what,
                       "host 1 (h1) counts 1 cable(s) to host 0 (h0), which "
                       "counts 0 back"))
      << c.findings[0].what;
}

TEST(FindingsTest, DoubledPairSeenOnceOnOneSideIsReportedOnce) {
  auto hosts = thunderboltHosts(2, {{0, 1}, {0, 1}});
  hosts[1].thunderboltPorts[1].peers.clear();  // h1 lost the second cable
  // and no subnet vouches for it either.
  hosts[0].interfaces[1].addresses.clear();
  hosts[1].interfaces[1].addresses.clear();
  Cluster c = checked(hosts);
  EXPECT_EQ(c.links.size(), 1u);
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  EXPECT_TRUE(contains(c.findings[0].what, "counts 2 cable(s)"));
  EXPECT_TRUE(contains(c.findings[0].what, "which counts 1 back"));
}

TEST(FindingsTest, CleanMacMeshHasNoFindings) {
  auto hosts = macInventories("mesh4", 4);
  addressCables(hosts, mesh4Cables());
  for (auto& h : hosts) {
    h.rdmaState = "enabled";
    h.rdmaDevices = {{"rdma_en2", "en2", true}};
  }
  for (bool rdma : {false, true}) {
    Cluster c = checked(hosts, rdma);
    ASSERT_EQ(c.links.size(), 7u);
    EXPECT_TRUE(c.findings.empty()) << describe(c);
    EXPECT_FALSE(hasErrors(c));
  }
}

TEST(FindingsTest, SortedErrorsFirstKeepingEarlierFindings) {
  auto hosts = thunderboltHosts(3, {{0, 1}, {1, 2}, {0, 2}}, 4);
  hosts[0].bridgeActive = true;  // error (loop)
  hosts[0].bridgeDevice = "bridge0";
  hosts[0].interfaces[1].mtu = 1500;  // warning: the ends of cable 0-2
  hosts[2].interfaces[1].mtu = 9000;  // differ
  Cluster c = buildCluster(hosts, oneRankEach(3));
  c.findings.push_back({"info", "earlier", "", ""});
  EXPECT_FALSE(hasErrors(c));
  addFindings(c, {});
  // 1 error, 1 warning, 3 TB4 infos and the earlier one.
  ASSERT_EQ(c.findings.size(), 6u) << describe(c);
  EXPECT_EQ(c.findings[0].severity, "error");
  EXPECT_EQ(c.findings[1].severity, "warning");
  EXPECT_TRUE(contains(c.findings[1].what, "host 2 (h2) en3"));
  EXPECT_EQ(c.findings[2].what, "earlier");  // stable among infos
  for (size_t k = 2; k < 6; ++k) EXPECT_EQ(c.findings[k].severity, "info");
  EXPECT_TRUE(hasErrors(c));
}

TEST(FindingsTest, InventoryProblemsAreWarnings) {
  auto hosts = makeHosts(2);
  hosts[1].problems = {"system_profiler timed out after 5 s"};
  Cluster c = checked(hosts);
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  EXPECT_EQ(c.findings[0].severity, "warning");
  EXPECT_TRUE(contains(c.findings[0].what, "host 1 (h1)"));
  EXPECT_EQ(c.findings[0].why, "system_profiler timed out after 5 s");
  EXPECT_FALSE(hasErrors(c));
}

}  // namespace
}  // namespace mcl::topology
