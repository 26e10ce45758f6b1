// Shared by the cluster, JSON and findings tests: host inventories built by
// hand (interfaces with addresses, Thunderbolt ports with peers) and from
// the macOS fixtures (system_profiler JSON + networksetup text).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "topology/cluster.h"
#include "topology/findings.h"
#include "topology/inventory.h"
#include "topology/networksetup.h"
#include "topology/thunderbolt_macos.h"
#include "topology_fixtures.h"

namespace mcl::testing {

using topology::HostInventory;
using topology::InterfaceAddress;
using topology::InterfaceEntry;
using topology::ThunderboltPeer;
using topology::ThunderboltPort;

inline InterfaceEntry makeInterface(const std::string& name,
                                    const std::string& medium, bool up,
                                    std::vector<InterfaceAddress> addresses,
                                    int receptacle = 0) {
  InterfaceEntry e;
  e.name = name;
  e.medium = medium;
  e.up = up;
  e.receptacle = receptacle;
  e.addresses = std::move(addresses);
  return e;
}

inline HostInventory makeInventory(const std::string& name,
                                   std::vector<InterfaceEntry> interfaces) {
  HostInventory inv;
  inv.identity = "id-" + name;
  inv.name = name;
  inv.interfaces = std::move(interfaces);
  return inv;
}

// n hosts "h0", "h1", ... with no interfaces yet.
inline std::vector<HostInventory> makeHosts(int n) {
  std::vector<HostInventory> hosts;
  for (int h = 0; h < n; ++h)
    hosts.push_back(makeInventory("h" + std::to_string(h), {}));
  return hosts;
}

// Host h has rank h.
inline std::vector<std::vector<int>> oneRankEach(size_t n) {
  std::vector<std::vector<int>> ranks;
  for (size_t h = 0; h < n; ++h) ranks.push_back({static_cast<int>(h)});
  return ranks;
}

// The cluster of these hosts (one rank each) with the doctor's findings.
inline topology::Cluster checked(const std::vector<HostInventory>& hosts,
                                 bool rdma = false) {
  topology::Cluster c =
      topology::buildCluster(hosts, oneRankEach(hosts.size()));
  topology::CheckOptions options;
  options.rdmaWanted = rdma;
  topology::addFindings(c, options);
  return c;
}

// The findings one per line, for failure messages.
inline std::string describe(const topology::Cluster& c) {
  std::string s;
  for (const topology::Finding& f : c.findings)
    s += f.severity + ": " + f.what + " | " + f.fix + "\n";
  return s;
}

// Adds an address to the interface `name` of `inv`, creating the interface
// (up, of `medium`) if it is not there.
inline void addAddress(HostInventory& inv, const std::string& name,
                       const std::string& address, int prefix,
                       const std::string& medium = "ethernet") {
  for (InterfaceEntry& e : inv.interfaces)
    if (e.name == name) {
      e.addresses.push_back({address, prefix});
      return;
    }
  inv.interfaces.push_back(
      makeInterface(name, medium, true, {{address, prefix}}));
}

// One cable between hosts a and b as a /30: 10.77.<net>.1 on a's interface,
// 10.77.<net>.2 on b's.
inline void cable(std::vector<HostInventory>& hosts, int a,
                  const std::string& ifA, int b, const std::string& ifB,
                  int net, const std::string& medium = "ethernet") {
  std::string base = "10.77." + std::to_string(net) + ".";
  addAddress(hosts[size_t(a)], ifA, base + "1", 30, medium);
  addAddress(hosts[size_t(b)], ifB, base + "2", 30, medium);
}

inline ThunderboltPort makePort(const std::string& uuid, int receptacle,
                                int generation,
                                std::vector<std::string> directPeers) {
  ThunderboltPort p;
  p.busName = "thunderboltusb4_bus_" + std::to_string(receptacle - 1);
  p.uuid = uuid;
  p.receptacle = receptacle;
  p.generation = generation;
  p.speedGbps = generation == 5 ? 80 : generation == 4 ? 40 : 0;
  p.speedText = "Up to " + std::to_string(p.speedGbps) + " Gb/s";
  p.deviceName = "Mac Studio";
  for (const std::string& u : directPeers)
    p.peers.push_back(ThunderboltPeer{u, "Mac Studio", "Apple Inc.", 1});
  return p;
}

// Inventories of macos/<dir>/mac0..mac<count-1>: the parsed ports, and one
// Thunderbolt interface (no address) per "Thunderbolt N" of networksetup.
inline std::vector<HostInventory> macInventories(const std::string& dir,
                                                 int count) {
  std::vector<HostInventory> hosts;
  for (int h = 0; h < count; ++h) {
    std::string base = "macos/" + dir + "/mac" + std::to_string(h);
    HostInventory inv = makeInventory("mac" + std::to_string(h), {});
    inv.thunderboltDetected = true;
    inv.thunderboltPorts =
        topology::parseSystemProfilerThunderbolt(readFixture(base + ".json"));
    auto hw = topology::parseNetworksetupPorts(
        readFixture(base + ".networksetup.txt"));
    for (const auto& [receptacle, device] : hw.thunderbolt)
      inv.interfaces.push_back(
          makeInterface(device, "thunderbolt", true, {}, receptacle));
    hosts.push_back(std::move(inv));
  }
  return hosts;
}

struct CableEnds {
  int a;
  const char* ifA;
  int b;
  const char* ifB;
};

// The seven cables of macos/mesh4 (mac0-mac1 doubled), by interface, in the
// order buildCluster lists them.
inline const std::vector<CableEnds>& mesh4Cables() {
  static const std::vector<CableEnds> cables = {
      {0, "en2", 1, "en4"}, {0, "en5", 1, "en2"}, {0, "en3", 2, "en3"},
      {0, "en4", 3, "en3"}, {1, "en3", 2, "en5"}, {1, "en5", 3, "en2"},
      {2, "en4", 3, "en4"}};
  return cables;
}

// Gives each listed cable its own /30 (10.77.<index+1>.0/30).
inline void addressCables(std::vector<HostInventory>& hosts,
                          const std::vector<CableEnds>& cables) {
  for (size_t k = 0; k < cables.size(); ++k)
    cable(hosts, cables[k].a, cables[k].ifA, cables[k].b, cables[k].ifB,
          static_cast<int>(k) + 1, "thunderbolt");
}

}  // namespace mcl::testing
