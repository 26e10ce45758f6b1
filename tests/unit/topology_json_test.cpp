// The cluster as JSON (topology/cluster_json.h): dump and load back, the
// errors a hand-written MCL_TOPO_FILE gets, MLX's own files, and the host
// inventory's wire format (topology/inventory.h).
#include <gtest/gtest.h>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "topology/cluster_json.h"
#include "topology/inventory.h"
#include "topology_inventory_builders.h"

namespace mcl::topology {
namespace {

using mcl::testing::addAddress;
using mcl::testing::addressCables;
using mcl::testing::cable;
using mcl::testing::expectInvalid;
using mcl::testing::fixturePath;
using mcl::testing::macInventories;
using mcl::testing::makeHosts;
using mcl::testing::makePort;
using mcl::testing::mesh4Cables;
using mcl::testing::oneRankEach;
using mcl::testing::readFixture;
using nlohmann::json;

void expectSameLinks(const Cluster& got, const Cluster& want) {
  ASSERT_EQ(got.links.size(), want.links.size());
  for (size_t k = 0; k < got.links.size(); ++k) {
    const ClusterLink& x = got.links[k];
    const ClusterLink& y = want.links[k];
    SCOPED_TRACE("link " + std::to_string(k));
    for (auto [e, f] : {std::pair{&x.a, &y.a}, {&x.b, &y.b}}) {
      EXPECT_EQ(e->host, f->host);
      EXPECT_EQ(e->interface, f->interface);
      EXPECT_EQ(e->address, f->address);
      EXPECT_EQ(e->receptacle, f->receptacle);
    }
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.speedGbps, y.speedGbps);
    EXPECT_EQ(x.generation, y.generation);
    EXPECT_EQ(x.wire, y.wire);
    EXPECT_EQ(x.subnet, y.subnet);
    EXPECT_EQ(x.matchedBy, "file");
  }
}

void expectRoundTrip(const Cluster& c) {
  std::string text = clusterToJson(c).dump(2);
  Cluster back = clusterFromText(text, "/tmp/topo.json");
  EXPECT_EQ(back.source, "file /tmp/topo.json");
  EXPECT_EQ(back.shape, c.shape);
  ASSERT_EQ(back.hosts.size(), c.hosts.size());
  for (size_t h = 0; h < c.hosts.size(); ++h) {
    EXPECT_EQ(back.hosts[h].id, c.hosts[h].id);
    EXPECT_EQ(back.hosts[h].name, c.hosts[h].name);
    EXPECT_EQ(back.hosts[h].identity, c.hosts[h].identity);
    EXPECT_EQ(back.hosts[h].ranks, c.hosts[h].ranks);
    EXPECT_TRUE(back.hosts[h].hasInventory);
  }
  expectSameLinks(back, c);
  ASSERT_EQ(back.networks.size(), c.networks.size());
  for (size_t n = 0; n < c.networks.size(); ++n) {
    EXPECT_EQ(back.networks[n].subnet, c.networks[n].subnet);
    EXPECT_EQ(back.networks[n].members.size(), c.networks[n].members.size());
  }
}

TEST(ClusterJsonTest, RoundTripOfAMacMesh) {
  auto hosts = macInventories("mesh4", 4);
  addressCables(hosts, mesh4Cables());
  addAddress(hosts[0], "en0", "192.168.1.10", 24);
  addAddress(hosts[2], "en0", "192.168.1.12", 24);
  addAddress(hosts[3], "en0", "192.168.1.13", 24);
  Cluster c = buildCluster(hosts, {{0, 4}, {1, 5}, {2}, {3}});
  ASSERT_EQ(c.shape, "full_mesh");
  ASSERT_EQ(c.networks.size(), 1u);
  expectRoundTrip(c);
  json j = json::parse(clusterToJson(c).dump());
  EXPECT_EQ(j["mcl_topology"], kTopologyFormatVersion);
  EXPECT_EQ(j["links"][1]["wire"], 1);
  EXPECT_EQ(j["links"][0]["a"]["port"], 1);
  EXPECT_EQ(j["hosts"][1]["ranks"], json({1, 5}));
}

TEST(ClusterJsonTest, RoundTripOfARingWithoutInterfaces) {
  // No networksetup: the ends are known by port number only.
  auto hosts = macInventories("ring4", 4);
  for (auto& h : hosts) h.interfaces.clear();
  Cluster c = buildCluster(hosts, oneRankEach(4));
  ASSERT_EQ(c.links.size(), 4u);
  ASSERT_EQ(c.links[0].a.interface, "");
  expectRoundTrip(c);
}

TEST(ClusterJsonTest, RoundTripOfASubnetLineAndALan) {
  auto hosts = makeHosts(3);
  cable(hosts, 0, "eth1", 1, "eth1", 1);
  cable(hosts, 1, "eth2", 2, "eth1", 2);
  Cluster line = buildCluster(hosts, oneRankEach(3));
  ASSERT_EQ(line.shape, "line");
  expectRoundTrip(line);
  auto lanHosts = makeHosts(2);
  addAddress(lanHosts[0], "en0", "10.1.0.1", 24, "wifi");
  addAddress(lanHosts[1], "en0", "10.1.0.2", 24, "wifi");
  Cluster lan = buildCluster(lanHosts, {{1}, {0}});
  ASSERT_EQ(lan.shape, "lan");
  expectRoundTrip(lan);
}

// ---- errors ------------------------------------------------------------

const char* kTwoHosts = R"("hosts": [{"id": 0, "name": "a", "ranks": [0]},
                                     {"id": 1, "name": "b", "ranks": [1]}])";

std::string withLinks(const std::string& links) {
  return std::string("{") + kTwoHosts + R"(, "links": [)" + links + "]}";
}

const char* kGoodLink =
    R"({"a": {"host": 0, "interface": "en2"}, "b": {"host": 1, "interface": "en3"}})";

void expectBad(const std::string& text, const std::string& why,
               std::initializer_list<const char*> mentions) {
  expectInvalid([&] { clusterFromText(text, "/etc/topo.json"); }, why,
                mentions);
}

TEST(ClusterJsonTest, MinimalFileIsAPair) {
  Cluster c = clusterFromText(withLinks(kGoodLink), "x.json");
  EXPECT_EQ(c.shape, "pair");
  ASSERT_EQ(c.links.size(), 1u);
  EXPECT_EQ(c.links[0].kind, "unknown");
  EXPECT_EQ(c.links[0].b.interface, "en3");
  EXPECT_FALSE(c.hosts[0].hasInventory);
}

TEST(ClusterJsonTest, MalformedFilesNameThePlace) {
  expectBad("", "empty", {"/etc/topo.json", "empty"});
  expectBad(withLinks(kGoodLink).substr(0, 60), "truncated",
            {"/etc/topo.json", "cut short"});
  expectBad(R"({"hosts": {"id": 0}, "links": []})", "hosts not a list",
            {"/etc/topo.json", "hosts", "list"});
  expectBad(R"({"hosts": [{"id": 1, "name": "a", "ranks": [0]}], "links": []})",
            "id order", {"hosts[0].id", "id order"});
  expectBad(R"({"hosts": [{"id": 0, "name": "a", "ranks": [0, 1]},
                          {"id": 1, "name": "b", "ranks": [1]}], "links": []})",
            "rank twice", {"hosts", "rank 1 is listed twice"});
  expectBad(R"({"hosts": [{"id": 0, "name": "a", "ranks": [0]},
                          {"id": 1, "name": "b", "ranks": [2]}], "links": []})",
            "rank gap", {"hosts", "0..1"});
  expectBad(R"({"hosts": [{"id": 0, "ranks": [0]}], "links": []})", "no name",
            {"hosts[0]", "name"});
  expectBad(withLinks(std::string(kGoodLink) +
                      R"(, {"a": {"host": 0, "interface": "en4"},
                            "b": {"host": 2, "interface": "en2"}})"),
            "host out of range", {"links[1].b.host", "out of range"});
  expectBad(withLinks(std::string(kGoodLink) +
                      R"(, {"a": {"host": 1, "interface": "en4"},
                            "b": {"host": 1, "interface": "en2"}})"),
            "one host", {"links[1]", "both ends are on host 1"});
  expectBad(withLinks(R"({"a": {"host": 0, "interface": "en2"},
                          "b": {"host": 1, "interface": "en3"},
                          "kind": "fibre"})"),
            "kind", {"links[0].kind", "fibre"});
  expectBad(withLinks(R"({"a": {"host": 0}, "b": {"host": 1}})"),
            "no interface", {"links[0].a", "interface"});
  expectBad(withLinks(R"({"a": {"host": 0, "interface": "en2"}})"), "no b",
            {"links[0]", "\"b\""});
  expectBad(std::string("{\"shape\": \"ring\",") + kTwoHosts +
                R"(, "links": [)" + kGoodLink + "]}",
            "stated shape", {"shape", "\"ring\"", "\"pair\""});
  expectBad(R"({"nodes": []})", "unknown object", {"top level", "not an mcl"});
  expectBad("42", "number", {"top level"});
  expectBad(R"([1, 2, 3])", "list of numbers", {"top level"});
}

TEST(ClusterJsonTest, StatedShapeThatMatchesIsAccepted) {
  Cluster c = clusterFromText(std::string("{\"shape\": \"pair\",") + kTwoHosts +
                                  R"(, "links": [)" + kGoodLink + "]}",
                              "x");
  EXPECT_EQ(c.shape, "pair");
}

// ---- MLX files ---------------------------------------------------------

TEST(ClusterJsonTest, DeviceMatrixMeshOfFour) {
  std::string path = fixturePath("device_matrix/mesh4.json");
  Cluster c = clusterFromText(readFixture("device_matrix/mesh4.json"), path);
  EXPECT_EQ(c.source, "file " + path);
  ASSERT_EQ(c.hosts.size(), 4u);
  EXPECT_EQ(c.hosts[2].name, "host 2");
  EXPECT_EQ(c.hosts[2].ranks, std::vector<int>{2});
  EXPECT_EQ(c.shape, "full_mesh");
  ASSERT_EQ(c.links.size(), 6u);
  const char* ifA[] = {"en2", "en3", "en4", "en4", "en5", "en2"};
  const char* ifB[] = {"en2", "en3", "en4", "en4", "en5", "en2"};
  const int hostB[] = {1, 2, 3, 2, 3, 3};
  for (size_t k = 0; k < 6; ++k) {
    EXPECT_EQ(c.links[k].kind, "thunderbolt");
    EXPECT_EQ(c.links[k].matchedBy, "file");
    EXPECT_EQ(c.links[k].a.interface, ifA[k]) << k;
    EXPECT_EQ(c.links[k].b.interface, ifB[k]) << k;
    EXPECT_EQ(c.links[k].b.host, hostB[k]) << k;
  }
}

TEST(ClusterJsonTest, DeviceMatrixDoubledPairIsTwoWires) {
  Cluster c =
      clusterFromText(readFixture("device_matrix/doubled_pair.json"), "dm");
  ASSERT_EQ(c.links.size(), 4u);
  EXPECT_EQ(c.cablesBetween(0, 1), 2);
  EXPECT_EQ(c.links[0].a.interface, "en2");
  EXPECT_EQ(c.links[0].b.interface, "en4");
  EXPECT_EQ(c.links[0].wire, 0);
  EXPECT_EQ(c.links[1].a.interface, "en5");
  EXPECT_EQ(c.links[1].b.interface, "en2");
  EXPECT_EQ(c.links[1].wire, 1);
  EXPECT_EQ(c.shape, "ring");
}

TEST(ClusterJsonTest, MalformedDeviceMatrixNamesThePath) {
  std::string path = fixturePath("device_matrix/asymmetric.json");
  expectInvalid(
      [&] {
        clusterFromText(readFixture("device_matrix/asymmetric.json"), path);
      },
      "asymmetric", {path.c_str(), "row 0, column 1"});
}

TEST(ClusterJsonTest, RingHostfile) {
  Cluster c = clusterFromText(
      R"([["10.0.0.1:5000"], ["10.0.0.2:5000"], ["10.0.0.3:5000"]])", "hf");
  ASSERT_EQ(c.hosts.size(), 3u);
  EXPECT_EQ(c.hosts[1].name, "10.0.0.2");
  EXPECT_EQ(c.shape, "ring");
  ASSERT_EQ(c.links.size(), 3u);
  EXPECT_EQ(c.links[0].a.address, "10.0.0.1");
  EXPECT_EQ(c.links[0].b.address, "10.0.0.2");
  EXPECT_EQ(c.links[1].a.host, 0);
  EXPECT_EQ(c.links[1].b.host, 2);
  EXPECT_EQ(c.links[1].b.address, "10.0.0.3");
  EXPECT_EQ(c.links[2].a.address, "10.0.0.2");
  EXPECT_EQ(c.links[2].b.address, "10.0.0.3");
}

TEST(ClusterJsonTest, LauncherHostfile) {
  Cluster c = clusterFromText(
      R"({"hosts": [{"ssh": "m1", "ips": ["10.0.0.1"], "rdma": [null, "rdma_en3"]},
                    {"ssh": "m2", "ips": ["10.0.0.2"], "rdma": ["rdma_en4", null]}]})",
      "hosts.json");
  ASSERT_EQ(c.hosts.size(), 2u);
  EXPECT_EQ(c.hosts[0].name, "m1");
  EXPECT_EQ(c.hosts[1].name, "m2");
  EXPECT_EQ(c.hosts[1].ranks, std::vector<int>{1});
  ASSERT_EQ(c.links.size(), 1u);
  EXPECT_EQ(c.links[0].a.host, 0);
  EXPECT_EQ(c.links[0].a.interface, "en3");
  EXPECT_EQ(c.links[0].b.host, 1);
  EXPECT_EQ(c.links[0].b.interface, "en4");
  EXPECT_EQ(c.shape, "pair");
}

TEST(ClusterJsonTest, LauncherHostfileWithoutSshIsInvalid) {
  expectInvalid(
      [] { clusterFromText(R"([{"ssh": "m1"}, {"ips": []}])", "h.json"); },
      "no ssh", {"h.json", "hosts[1]", "ssh"});
}

// ---- inventories ---------------------------------------------------------

HostInventory richInventory() {
  HostInventory inv = makeHosts(1)[0];
  inv.machine.cores = 12;
  inv.machine.threads = 24;
  inv.machine.memoryBytes = 1ull << 37;
  inv.machine.cpuModel = "Apple M4 Max";
  inv.machine.source = "sysconf";
  addAddress(inv, "en2", "10.77.1.1", 30, "thunderbolt");
  addAddress(inv, "en2", "fd00::1", 126, "thunderbolt");
  inv.interfaces[0].receptacle = 1;
  inv.interfaces[0].speedGbps = 80;
  inv.thunderboltDetected = true;
  inv.thunderboltPorts = {makePort("A1", 1, 5, {"B3"}),
                          makePort("A2", 2, 4, {})};
  inv.thunderboltPorts[0].peers.push_back({"", "Portable SSD", "Acme", 2});
  inv.bridgeActive = true;
  inv.bridgeDevice = "bridge0";
  inv.rdmaState = "enabled";
  inv.rdmaDevices = {{"rdma_en2", "en2", true}};
  inv.problems = {"networksetup timed out"};
  return inv;
}

TEST(InventoryJsonTest, RoundTrip) {
  HostInventory want = richInventory();
  HostInventory got =
      inventoryFromJson(json::parse(inventoryToJson(want).dump()));
  EXPECT_EQ(got.identity, "id-h0");
  EXPECT_EQ(got.name, "h0");
  EXPECT_EQ(got.machine.cores, 12);
  EXPECT_EQ(got.machine.threads, 24);
  EXPECT_EQ(got.machine.memoryBytes, 1ull << 37);
  EXPECT_EQ(got.machine.cpuModel, "Apple M4 Max");
  ASSERT_EQ(got.interfaces.size(), 1u);
  const InterfaceEntry& e = got.interfaces[0];
  EXPECT_EQ(e.name, "en2");
  EXPECT_EQ(e.medium, "thunderbolt");
  EXPECT_TRUE(e.up);
  EXPECT_EQ(e.receptacle, 1);
  EXPECT_EQ(e.speedGbps, 80);
  ASSERT_EQ(e.addresses.size(), 2u);
  EXPECT_EQ(e.addresses[1].address, "fd00::1");
  EXPECT_EQ(e.addresses[1].prefixLength, 126);
  EXPECT_TRUE(got.thunderboltDetected);
  ASSERT_EQ(got.thunderboltPorts.size(), 2u);
  const ThunderboltPort& p = got.thunderboltPorts[0];
  EXPECT_EQ(p.uuid, "A1");
  EXPECT_EQ(p.receptacle, 1);
  EXPECT_EQ(p.speedGbps, 80);
  EXPECT_EQ(p.generation, 5);
  EXPECT_EQ(p.busName, "thunderboltusb4_bus_0");
  EXPECT_EQ(p.speedText, "Up to 80 Gb/s");
  ASSERT_EQ(p.peers.size(), 2u);
  EXPECT_EQ(p.peers[0].uuid, "B3");
  EXPECT_TRUE(p.peers[0].direct());
  EXPECT_EQ(p.peers[1].name, "Portable SSD");
  EXPECT_EQ(p.peers[1].vendor, "Acme");
  EXPECT_EQ(p.peers[1].depth, 2);
  EXPECT_EQ(got.thunderboltPorts[1].generation, 4);
  EXPECT_TRUE(got.thunderboltPorts[1].peers.empty());
  EXPECT_TRUE(got.bridgeActive);
  EXPECT_EQ(got.bridgeDevice, "bridge0");
  EXPECT_EQ(got.rdmaState, "enabled");
  ASSERT_EQ(got.rdmaDevices.size(), 1u);
  EXPECT_EQ(got.rdmaDevices[0].netdev, "en2");
  EXPECT_TRUE(got.rdmaDevices[0].active);
  EXPECT_EQ(got.problems, std::vector<std::string>{"networksetup timed out"});
}

TEST(InventoryJsonTest, MissingOrMistypedFieldIsInvalid) {
  json good = json::parse(inventoryToJson(richInventory()).dump());
  json j = good;
  j.erase("rdma_state");
  expectInvalid([&] { inventoryFromJson(j); }, "missing",
                {"host inventory", "rdma_state"});
  j = good;
  j["interfaces"][0]["up"] = "yes";
  expectInvalid([&] { inventoryFromJson(j); }, "wrong type",
                {"host inventory", "\"up\"", "string"});
  j = good;
  j["thunderbolt_ports"][0]["peers"][0].erase("depth");
  expectInvalid([&] { inventoryFromJson(j); }, "peer depth", {"depth"});
  j = good;
  j["problems"] = json::array({1});
  expectInvalid([&] { inventoryFromJson(j); }, "problem", {"problem"});
  expectInvalid([] { inventoryFromJson(json::array()); }, "not object",
                {"host inventory", "object"});
}

TEST(InventoryJsonTest, BadInventoryInsideATopologyFileIsInvalid) {
  auto hosts = makeHosts(2);
  cable(hosts, 0, "eth1", 1, "eth1", 1);
  json j =
      json::parse(clusterToJson(buildCluster(hosts, oneRankEach(2))).dump());
  j["hosts"][1]["inventory"].erase("machine");
  expectInvalid([&] { clusterFromText(j.dump(), "t.json"); }, "inventory",
                {"t.json", "hosts[1]", "machine"});
}

}  // namespace
}  // namespace mcl::topology
