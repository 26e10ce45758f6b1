// The doctor's address, path and file checks on hand-built inventories
// (Linux-style interfaces): a cable's address with no far end, two ends in
// different subnets, interfaces sharing a subnet, RDMA without a GID,
// interfaces in odd states, and a topology file against detection.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "topology/address_checks.h"
#include "topology/cluster_json.h"
#include "topology/file_checks.h"
#include "topology/findings.h"
#include "topology_inventory_builders.h"

namespace mcl::topology {
namespace {

using mcl::testing::addAddress;
using mcl::testing::cable;
using mcl::testing::checked;
using mcl::testing::describe;
using mcl::testing::makeHosts;
using mcl::testing::makeInterface;
using mcl::testing::oneRankEach;

// n hosts on a LAN (eth0, 10.0.0.<h+1>/24).
std::vector<HostInventory> lanHosts(int n) {
  auto hosts = makeHosts(n);
  for (int h = 0; h < n; ++h)
    addAddress(hosts[size_t(h)], "eth0", "10.0.0." + std::to_string(h + 1), 24);
  return hosts;
}

InterfaceEntry wired(const std::string& name,
                     std::vector<InterfaceAddress> addresses,
                     bool carrier = true) {
  InterfaceEntry e = makeInterface(name, "ethernet", true, addresses);
  e.carrier = carrier;
  return e;
}

TEST(DoctorTest, CableWhoseFarEndHasNoAddress) {
  auto hosts = lanHosts(2);
  hosts[0].interfaces.push_back(wired("eth1", {{"10.99.3.1", 30}}));
  hosts[1].interfaces.push_back(wired("eth1", {{"fe80::1", 64}}));
  Cluster c = checked(hosts);
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  const Finding& f = c.findings[0];
  EXPECT_EQ(f.severity, "error");
  EXPECT_EQ(f.what,
            "host 0 (h0) eth1 has 10.99.3.1/30, a cable's own subnet, but its "
            "far end has no address: host 1 (h1) eth1 is up with a link and "
            "no address");
  EXPECT_EQ(f.fix,
            "Give host 1 (h1) eth1 the other address of the subnet: `sudo ip "
            "addr add 10.99.3.2/30 dev eth1`");
  EXPECT_EQ(f.hosts, (std::vector<int>{0, 1}));
  EXPECT_EQ(f.pairs, (std::vector<std::pair<int, int>>{{0, 1}}));
  auto suspected = suspectedCables(c);
  ASSERT_EQ(suspected.size(), 1u);
  EXPECT_EQ(suspected[0].interfaceB, "eth1");
  // Traffic over the LAN names the cable it could have used.
  c.paths = {{0, 1, "tcp", "lan", {"eth0>eth0"}, "", ""}};
  c.findings.clear();
  addFindings(c, {});
  ASSERT_EQ(c.findings.size(), 2u) << describe(c);
  EXPECT_EQ(c.findings[1].what,
            "host 0 (h0) and host 1 (h1) are cabled (eth1<->eth1 not "
            "configured), but their traffic takes lan eth0>eth0");
}

TEST(DoctorTest, EndsInDifferentSubnets) {
  auto hosts = lanHosts(2);
  hosts[0].interfaces.push_back(wired("eth1", {{"10.99.3.1", 30}}));
  hosts[1].interfaces.push_back(wired("eth1", {{"10.99.4.2", 30}}));
  Cluster c = checked(hosts);
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  EXPECT_EQ(c.findings[0].severity, "error");
  EXPECT_EQ(c.findings[0].what,
            "host 0 (h0) eth1 (10.99.3.1/30) and host 1 (h1) eth1 "
            "(10.99.4.2/30) look like the two ends of one cable, in "
            "different subnets");
  // Hosts that have a cable already: the loose ends go elsewhere.
  cable(hosts, 0, "eth2", 1, "eth2", 5);
  c = checked(hosts);
  ASSERT_EQ(c.findings.size(), 2u) << describe(c);
  for (const Finding& f : c.findings) {
    EXPECT_EQ(f.severity, "info") << f.what;
    EXPECT_NE(f.what.find("no host of this job answers in it"),
              std::string::npos)
        << f.what;
  }
}

TEST(DoctorTest, LooseEndSeverityDependsOnWhatTheJobLacks) {
  // Host 2 is reached by no cable: the loose end may be that cable.
  auto hosts = lanHosts(3);
  cable(hosts, 0, "eth2", 1, "eth2", 5);
  hosts[0].interfaces.push_back(wired("eth1", {{"10.99.3.1", 30}}));
  Cluster c = checked(hosts);
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  EXPECT_EQ(c.findings[0].severity, "warning");
  EXPECT_EQ(c.findings[0].fix,
            "Give the far end 10.99.3.2/30 (then `mcl-perf qualify` tests "
            "the cable)");
  // Without a link it is only unusual.
  hosts[0].interfaces.back().carrier = false;
  c = checked(hosts);
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  EXPECT_EQ(c.findings[0].severity, "info");
  EXPECT_EQ(c.findings[0].what,
            "host 0 (h0) eth1 has a cable's address (10.99.3.1/30) but no "
            "link");
}

TEST(DoctorTest, InterfacesOfOneHostInOneSubnet) {
  auto hosts = lanHosts(2);
  addAddress(hosts[0], "eth1", "10.0.0.9", 24);
  Cluster c = checked(hosts);
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  EXPECT_EQ(c.findings[0].severity, "warning");
  EXPECT_EQ(c.findings[0].what,
            "host 0 (h0) has 2 interfaces in one subnet, 10.0.0.0/24 (eth0, "
            "eth1)");
}

TEST(DoctorTest, ThunderboltLinksSharingASubnet) {
  auto hosts = lanHosts(3);
  addAddress(hosts[0], "thunderbolt0", "10.99.0.1", 24, "thunderbolt");
  addAddress(hosts[1], "thunderbolt0", "10.99.0.2", 24, "thunderbolt");
  addAddress(hosts[2], "thunderbolt0", "10.99.0.3", 24, "thunderbolt");
  Cluster c = checked(hosts);
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  EXPECT_EQ(c.findings[0].severity, "error");
  EXPECT_EQ(c.findings[0].what,
            "Thunderbolt links share one subnet, 10.99.0.0/24: host 0 (h0) "
            "thunderbolt0, host 1 (h1) thunderbolt0, host 2 (h2) "
            "thunderbolt0");
}

TEST(DoctorTest, RdmaDeviceWithoutIpv4HasNoGid) {
  auto hosts = lanHosts(2);
  hosts[0].interfaces.push_back(wired("eth2", {{"fe80::2", 64}}));
  hosts[0].rdmaDevices = {{"mlx5_0", "eth2", true},
                          {"mlx5_1", "eth3", false}};  // port down: moot
  for (bool rdma : {false, true}) {
    Cluster c = checked(hosts, rdma);
    ASSERT_EQ(c.findings.size(), 1u) << describe(c);
    EXPECT_EQ(c.findings[0].severity, rdma ? "error" : "warning");
    EXPECT_EQ(c.findings[0].what,
              "RDMA device mlx5_0 on host 0 (h0) sits on eth2, which has no "
              "IPv4 address");
  }
}

TEST(DoctorTest, OddInterfaceStatesGiveNoFalseAlarm) {
  auto hosts = lanHosts(2);
  cable(hosts, 0, "eth1", 1, "eth1", 7);
  HostInventory& h = hosts[0];
  h.interfaces.push_back(
      makeInterface("down0", "ethernet", false, {{"10.99.5.1", 30}}));
  h.interfaces.push_back(wired("nocarrier0", {}, false));
  h.interfaces.push_back(makeInterface("empty0", "other", true, {}));
  h.interfaces.push_back(wired("v6only0", {{"fd00:1::1", 64}}));
  h.interfaces.push_back(
      makeInterface("wg0", "other", true, {{"100.64.0.7", 32}}));
  for (int k = 0; k < 20; ++k)  // many addresses on one interface
    addAddress(h, "eth1", "10.50." + std::to_string(k) + ".1", 24);
  h.interfaces.push_back(makeInterface("", "", true, {{"", -1}}));
  Cluster c = checked(hosts);
  EXPECT_TRUE(c.findings.empty()) << describe(c);
  ASSERT_EQ(c.links.size(), 1u);
}

// Two hosts cabled twice (eth1, eth2), as detection and as a file.
Cluster doubled(int cables) {
  auto hosts = makeHosts(2);
  cable(hosts, 0, "eth1", 1, "eth1", 1);
  if (cables > 1) cable(hosts, 0, "eth2", 1, "eth2", 2);
  return buildCluster(hosts, oneRankEach(2));
}

TEST(DoctorTest, FileListsACableDetectionDoesNotSee) {
  const Cluster file = doubled(2);
  const Cluster seen = doubled(1);
  auto found = compareWithDetection(file, seen, "MCL_TOPO_FILE=f.json", false);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, "warning");
  EXPECT_EQ(found[0].what,
            "MCL_TOPO_FILE=f.json lists cable eth2<->eth2 between host 0 (h0) "
            "and host 1 (h1), which detection does not see");
  EXPECT_EQ(found[0].why,
            "detection sees eth1<->eth1 between them; the job follows "
            "detection (MCL_TOPO_FILE_FORCE=1 follows the file), so the job "
            "does not use it");
  found = compareWithDetection(file, seen, "MCL_TOPO_FILE=f.json", true);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, "error");  // the job tries a missing cable
}

TEST(DoctorTest, DetectionSeesACableTheFileLeavesOut) {
  auto found = compareWithDetection(doubled(1), doubled(2), "F", true);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, "warning");
  EXPECT_EQ(found[0].what,
            "detection sees cable eth2<->eth2 between host 0 (h0) and host 1 "
            "(h1), which F does not list");
  EXPECT_EQ(found[0].why,
            "the file lists eth1<->eth1; the file is forced "
            "(MCL_TOPO_FILE_FORCE=1), so the cable stays unused");
  EXPECT_TRUE(compareWithDetection(doubled(2), doubled(2), "F", false).empty());
}

TEST(DoctorTest, FileEndsMatchByPortOrNotAtAllAndUnknownHostsAreSkipped) {
  Cluster file = doubled(2);
  for (ClusterLink& l : file.links) {  // the file names no interfaces
    l.a.interface.clear();
    l.b.interface.clear();
  }
  EXPECT_TRUE(compareWithDetection(file, doubled(2), "F", false).empty());
  Cluster seen = doubled(1);
  seen.hosts[1].inventory.interfaces.clear();  // detection saw nothing there
  EXPECT_TRUE(compareWithDetection(doubled(2), seen, "F", false).empty());
}

TEST(DoctorTest, FindingsCarryTheirHostsAndPairsInJson) {
  auto hosts = lanHosts(2);
  hosts[0].interfaces.push_back(wired("eth1", {{"10.99.3.1", 30}}));
  hosts[1].interfaces.push_back(wired("eth1", {}));
  Cluster c = checked(hosts);
  auto json = clusterToJson(c);
  ASSERT_EQ(json["findings"].size(), 1u);
  EXPECT_EQ(json["findings"][0]["hosts"].dump(), "[0,1]");
  EXPECT_EQ(json["findings"][0]["pairs"].dump(), "[[0,1]]");
}

}  // namespace
}  // namespace mcl::topology
