// The doctor on Macs, from what the Macs' own tools print: each mistake's
// fixtures (system_profiler JSON, networksetup and `ifconfig -a` text, in
// tests/fixtures/topology/macos/) go through the parsers and the inventory
// code detection runs on a Mac (describeMacInterfaces), then the checks.
// What a user sees is asserted word for word where it matters.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "topology/findings.h"
#include "topology/ifconfig.h"
#include "topology/macos_inventory.h"
#include "topology_inventory_builders.h"

namespace mcl::topology {
namespace {

using mcl::testing::checked;
using mcl::testing::describe;
using mcl::testing::oneRankEach;
using mcl::testing::readFixture;

// One Mac from its tools' output: getifaddrs' view from ifconfig's text
// (names, up, addresses), then everything detection adds on a Mac.
HostInventory macFromTools(const std::string& name, const std::string& sp,
                           const std::string& networksetup,
                           const std::string& ifconfig,
                           const std::string& rdmaCtl = "") {
  HostInventory inv;
  inv.identity = "id-" + name;
  inv.name = name;
  const std::string ifconfigText = readFixture(ifconfig);
  inv.interfaces = interfacesFromIfconfig(parseIfconfig(ifconfigText));
  MacToolOutputs tools;
  tools.systemProfiler = readFixture(sp);
  tools.networksetup = readFixture(networksetup);
  tools.ifconfig = ifconfigText;
  tools.rdmaCtl = rdmaCtl;
  describeMacInterfaces(inv, tools);
  EXPECT_TRUE(inv.problems.empty()) << inv.problems.front();
  return inv;
}

// mac0 .. mac<count-1>, each from three files whose paths name the Mac
// as {mac} ("macos/mesh4/{mac}.json").
std::vector<HostInventory> macsFromTools(int count, const std::string& sp,
                                         const std::string& networksetup,
                                         const std::string& ifconfig,
                                         const std::string& rdmaCtl = "") {
  auto named = [](std::string path, const std::string& mac) {
    const size_t at = path.find("{mac}");
    if (at != std::string::npos) path.replace(at, 5, mac);
    return path;
  };
  std::vector<HostInventory> hosts;
  for (int m = 0; m < count; ++m) {
    const std::string mac = "mac" + std::to_string(m);
    hosts.push_back(macFromTools(mac, named(sp, mac), named(networksetup, mac),
                                 named(ifconfig, mac), rdmaCtl));
  }
  return hosts;
}

// mesh4's mac0 and mac1 (two cables: mac0 en2 <-> mac1 en4, mac0 en5 <->
// mac1 en2) with the interfaces of macos/mistakes/<dir>/.
std::vector<HostInventory> macPair(const std::string& dir,
                                   const std::string& rdmaCtl = "") {
  return macsFromTools(
      2, "macos/mesh4/{mac}.json", "macos/mesh4/{mac}.networksetup.txt",
      "macos/mistakes/" + dir + "/{mac}.ifconfig.txt", rdmaCtl);
}

const Finding* findingWith(const Cluster& c, const std::string& part) {
  for (const Finding& f : c.findings)
    if (f.what.find(part) != std::string::npos) return &f;
  return nullptr;
}

TEST(DoctorMacTest, ToolsGiveMtuCarrierBridgeAndMedium) {
  auto hosts = macPair("mtu");
  const InterfaceEntry* en2 = hosts[0].findInterface("en2");
  ASSERT_NE(en2, nullptr);
  EXPECT_EQ(en2->medium, "thunderbolt");
  EXPECT_EQ(en2->receptacle, 1);
  EXPECT_EQ(en2->mtu, 9000);
  EXPECT_TRUE(en2->carrier);
  ASSERT_EQ(en2->addresses.size(), 2u);  // fe80:: and the cable's /30
  EXPECT_EQ(en2->addresses[1].address, "192.168.1.1");
  EXPECT_EQ(en2->addresses[1].prefixLength, 30);
  const InterfaceEntry* wifi = hosts[0].findInterface("en1");
  ASSERT_NE(wifi, nullptr);
  EXPECT_EQ(wifi->medium, "wifi");
  EXPECT_FALSE(wifi->carrier);  // status: inactive
}

TEST(DoctorMacTest, CableWhoseFarEndHasNoAddress) {
  // mac0's port 1 has 192.168.1.1/30; the far end (mac1 en4) none. The
  // cable is certain (both ports see each other), so the doctor names
  // the address the far end needs.
  Cluster c = checked(macPair("far_end"));
  ASSERT_EQ(c.links.size(), 2u);
  const Finding* f = findingWith(c, "en4 has no IPv4 address");
  ASSERT_NE(f, nullptr) << describe(c);
  EXPECT_EQ(f->severity, "error");
  EXPECT_EQ(f->what, "Thunderbolt port host 1 (mac1) en4 has no IPv4 address");
  EXPECT_EQ(f->fix,
            "Give it the other address of the far end's subnet: `sudo "
            "networksetup -setmanual \"Thunderbolt 3\" 192.168.1.2 "
            "255.255.255.252`");
  EXPECT_EQ(c.findings.size(), 1u) << describe(c);
  // RDMA on: the same error (no GID).
  auto rdma = macPair("far_end", "RDMA enabled\n");
  EXPECT_EQ(rdma[1].rdmaState, "enabled");
  Cluster r = checked(rdma, true);
  ASSERT_NE(findingWith(r, "en4 has no IPv4 address"), nullptr);
  EXPECT_TRUE(hasErrors(r));
}

TEST(DoctorMacTest, DoubledCableInOneSubnet) {
  Cluster c = checked(macPair("one_subnet"));
  ASSERT_EQ(c.links.size(), 2u);  // by port UUID: the cables are known
  const Finding* f = findingWith(c, "cables in one subnet");
  ASSERT_NE(f, nullptr) << describe(c);
  EXPECT_EQ(f->severity, "error");
  EXPECT_EQ(f->what,
            "host 0 (mac0) en2, en5 and host 1 (mac1) en4, en2: 2 cables in "
            "one subnet, 192.168.0.0/24");
  EXPECT_EQ(c.findings.size(), 1u) << describe(c);
}

TEST(DoctorMacTest, MtuThatDiffersAcrossACable) {
  Cluster c = checked(macPair("mtu"));
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  EXPECT_EQ(c.findings[0].severity, "warning");
  EXPECT_EQ(c.findings[0].what,
            "cable host 0 (mac0) en2 <-> host 1 (mac1) en4: MTU 9000 at en2, "
            "1500 at en4");
  EXPECT_EQ(c.findings[0].fix,
            "Set one MTU at both ends, e.g. on host 0 (mac0) `sudo "
            "networksetup -setMTU en2 1500` (or raise the other end)");
}

TEST(DoctorMacTest, ThunderboltBridgeOnEveryMacOfARing) {
  // A Mac's default: Thunderbolt Bridge holds every Thunderbolt port.
  auto hosts = macsFromTools(4, "macos/ring4/{mac}.json",
                             "macos/bridge/networksetup.txt",
                             "macos/mistakes/bridge_ring/ifconfig.txt");
  for (const HostInventory& h : hosts) {
    EXPECT_TRUE(h.bridgeActive);
    EXPECT_EQ(h.findInterface("en3")->bridge, "bridge0");
  }
  Cluster c = checked(hosts);
  ASSERT_EQ(c.links.size(), 4u);  // by port UUID, through the bridge
  ASSERT_EQ(c.findings.size(), 4u) << describe(c);
  for (int h = 0; h < 4; ++h) {
    const Finding& f = c.findings[size_t(h)];
    EXPECT_EQ(f.severity, "error");
    EXPECT_EQ(f.what, "Thunderbolt Bridge (bridge0) is on on host " +
                          std::to_string(h) + " (mac" + std::to_string(h) +
                          ") with Thunderbolt ports en2, en3, en4, in a loop "
                          "of cabled hosts");
    EXPECT_EQ(f.fix,
              "On that Mac: System Settings > Network > Thunderbolt Bridge > "
              "Make Inactive, or `sudo ifconfig bridge0 down`");
    EXPECT_EQ(f.hosts, std::vector<int>{h});
  }
}

TEST(DoctorMacTest, DataOverWifi) {
  // Two Macs with nothing in their Thunderbolt ports, on one Wi-Fi.
  auto hosts = macsFromTools(2, "macos/mistakes/wifi/{mac}.json",
                             "macos/mesh4/{mac}.networksetup.txt",
                             "macos/mistakes/wifi/{mac}.ifconfig.txt");
  Cluster c = buildCluster(hosts, oneRankEach(2));
  ASSERT_EQ(c.networks.size(), 1u);
  EXPECT_EQ(c.networks[0].medium, "wifi");
  c.paths = {{0, 1, "tcp", "lan", {"en1>en1"}, "", ""}};
  addFindings(c, {});
  ASSERT_EQ(c.findings.size(), 1u) << describe(c);
  EXPECT_EQ(c.findings[0].severity, "warning");
  EXPECT_EQ(c.findings[0].what,
            "host 0 (mac0) and host 1 (mac1) exchange data over Wi-Fi: lan "
            "en1>en1");
}

TEST(DoctorMacTest, Thunderbolt4CableBetweenThunderbolt5Macs) {
  auto hosts = macsFromTools(2, "macos/mistakes/tb4_cable/{mac}.json",
                             "macos/mesh4/{mac}.networksetup.txt",
                             "macos/mistakes/mtu/{mac}.ifconfig.txt");
  for (HostInventory& h : hosts)
    for (InterfaceEntry& e : h.interfaces) e.mtu = 1500;  // MTU is not this
  Cluster c = checked(hosts);
  const Finding* f = findingWith(c, "Thunderbolt 4 speed");
  ASSERT_NE(f, nullptr) << describe(c);
  EXPECT_EQ(f->severity, "warning");
  EXPECT_EQ(f->what,
            "cable host 0 (mac0) en2 <-> host 1 (mac1) en4 runs at "
            "Thunderbolt 4 speed between Thunderbolt 5 Macs");
  // With RDMA wanted it is an error (TB4 ports cannot do RDMA).
  EXPECT_TRUE(hasErrors(checked(hosts, true)));
}

TEST(DoctorMacTest, MacReachedThroughADock) {
  HostInventory hub = macFromTools("mbp", "macos/hub/hub_host.json",
                                   "macos/bridge/networksetup.txt",
                                   "macos/mistakes/mtu/mac0.ifconfig.txt");
  HostInventory mini = macFromTools("mini", "macos/hub/behind_dock.json",
                                    "macos/bridge/networksetup.txt",
                                    "macos/mistakes/mtu/mac1.ifconfig.txt");
  Cluster c = checked({hub, mini});
  const Finding* f = findingWith(c, "through");
  ASSERT_NE(f, nullptr) << describe(c);
  EXPECT_EQ(f->severity, "warning");
  EXPECT_EQ(f->what,
            "host 0 (mbp) Thunderbolt 1 reaches host 1 (mini) through TB4 "
            "Dock");
  EXPECT_EQ(f->pairs, (std::vector<std::pair<int, int>>{{0, 1}}));
}

}  // namespace
}  // namespace mcl::topology
