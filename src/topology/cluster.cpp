#include "topology/cluster.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/error.h"
#include "topology/cables.h"
#include "topology/subnet.h"

namespace mcl::topology {

namespace {

// The address an end shows: IPv4 first (what RDMA's GID needs), else IPv6.
std::string preferredAddress(const InterfaceEntry* e) {
  if (e == nullptr) return "";
  for (const InterfaceAddress& a : e->addresses)
    if (a.address.find(':') == std::string::npos) return a.address;
  return e->addresses.empty() ? "" : e->addresses.front().address;
}

// The subnet both interfaces have an address in, if any.
std::string sharedSubnet(const InterfaceEntry* x, const InterfaceEntry* y) {
  if (x == nullptr || y == nullptr) return "";
  for (const InterfaceAddress& a : x->addresses)
    for (const InterfaceAddress& b : y->addresses) {
      if (a.prefixLength != b.prefixLength || isLinkLocal(a.address)) continue;
      std::string s = subnetOf(a.address, a.prefixLength);
      if (!s.empty() && s == subnetOf(b.address, b.prefixLength)) return s;
    }
  return "";
}

double slower(double x, double y) {
  if (x <= 0) return y;
  if (y <= 0) return x;
  return std::min(x, y);
}

void addThunderboltCables(const std::vector<HostInventory>& inv,
                          Cluster& cluster) {
  std::vector<HostThunderbolt> hosts(inv.size());
  for (size_t h = 0; h < inv.size(); ++h) {
    hosts[h].ports = inv[h].thunderboltPorts;
    for (const InterfaceEntry& e : inv[h].interfaces)
      if (e.receptacle > 0) hosts[h].devices[e.receptacle] = e.name;
  }
  std::vector<Cable> cables;
  try {
    cables = findCables(hosts);
  } catch (const Error& e) {
    // Two ports claiming one UUID: no cable can be told apart. Say so and
    // fall back to matching by subnet.
    cluster.findings.push_back(
        {"error", "Thunderbolt port identities collide", e.what(),
         "Rerun `system_profiler SPThunderboltDataType -json` on each Mac; "
         "if two ports still share a domain UUID, report it (and set "
         "MCL_TOPO_FILE to describe the cables by hand)"});
  }
  for (const Cable& c : cables) {
    ClusterLink link;
    link.kind = "thunderbolt";
    link.matchedBy = "port_uuid";
    const InterfaceEntry* ends[2] = {nullptr, nullptr};
    int speeds[2] = {0, 0};
    int generations[2] = {0, 0};
    const CableEnd* cableEnds[2] = {&c.a, &c.b};
    LinkEnd* linkEnds[2] = {&link.a, &link.b};
    for (int side = 0; side < 2; ++side) {
      const CableEnd& ce = *cableEnds[side];
      const HostInventory& host = inv[static_cast<size_t>(ce.host)];
      ends[side] = ce.device.empty() ? nullptr : host.findInterface(ce.device);
      *linkEnds[side] = {ce.host, ce.device, preferredAddress(ends[side]),
                         ce.receptacle};
      for (const ThunderboltPort& p : host.thunderboltPorts)
        if (p.uuid == ce.portUuid) {
          speeds[side] = p.speedGbps;
          generations[side] = p.generation;
        }
    }
    link.speedGbps = slower(speeds[0], speeds[1]);
    link.generation = std::min(generations[0], generations[1]);
    link.subnet = sharedSubnet(ends[0], ends[1]);
    cluster.links.push_back(link);
  }
}

struct SubnetEnd {
  int host;
  const InterfaceEntry* entry;
  std::string address;
};

bool cableMedium(const InterfaceEntry& e) {
  return e.medium != "wifi" && e.medium != "bridge" && e.medium != "loopback";
}

// True when a cable already joins these two ends' hosts through one of
// these interfaces: the same wire seen again (its IPv6 subnet after its
// IPv4 one, or its subnet after its port UUIDs). Fills in what the earlier
// match lacked (an end whose interface networksetup did not name).
bool sameCable(Cluster& cluster, const SubnetEnd& x, const SubnetEnd& y,
               const std::string& subnet) {
  for (ClusterLink& l : cluster.links) {
    bool forward = l.a.host == x.host && l.b.host == y.host;
    bool backward = l.a.host == y.host && l.b.host == x.host;
    if (!forward && !backward) continue;
    LinkEnd& ex = forward ? l.a : l.b;
    LinkEnd& ey = forward ? l.b : l.a;
    bool xMatch = ex.interface == x.entry->name;
    bool yMatch = ey.interface == y.entry->name;
    if (!(xMatch && (yMatch || ey.interface.empty())) &&
        !(yMatch && ex.interface.empty()))
      continue;
    for (auto [end, from] : {std::pair{&ex, &x}, std::pair{&ey, &y}}) {
      if (end->interface.empty()) {
        end->interface = from->entry->name;
        end->address = from->address;
      }
    }
    if (l.subnet.empty()) l.subnet = subnet;
    return true;
  }
  return false;
}

// Cables found by subnet, and the shared networks, from every address that
// is not loopback or link-local.
void addSubnetLinks(const std::vector<HostInventory>& inv, Cluster& cluster) {
  std::map<std::string, std::vector<SubnetEnd>> bySubnet;
  std::map<std::string, bool> pointToPoint;
  for (size_t h = 0; h < inv.size(); ++h)
    for (const InterfaceEntry& e : inv[h].interfaces) {
      if (e.medium == "loopback" || !e.up) continue;
      for (const InterfaceAddress& a : e.addresses) {
        if (isLinkLocal(a.address)) continue;
        std::string s = subnetOf(a.address, a.prefixLength);
        if (s.empty()) continue;
        bySubnet[s].push_back({static_cast<int>(h), &e, a.address});
        pointToPoint[s] = pointToPoint[s] ||
                          isPointToPointPrefix(a.address, a.prefixLength) ||
                          e.medium == "thunderbolt";
      }
    }
  for (auto& [subnet, ends] : bySubnet) {
    std::sort(ends.begin(), ends.end(),
              [](const SubnetEnd& x, const SubnetEnd& y) {
                return std::tie(x.host, x.entry->name) <
                       std::tie(y.host, y.entry->name);
              });
    std::set<int> hostsIn;
    for (const SubnetEnd& e : ends) hostsIn.insert(e.host);
    if (hostsIn.size() < 2) continue;  // one host's own subnet
    bool cable = ends.size() == 2 && pointToPoint[subnet] &&
                 cableMedium(*ends[0].entry) && cableMedium(*ends[1].entry);
    if (cable) {
      if (sameCable(cluster, ends[0], ends[1], subnet)) continue;
      ClusterLink link;
      link.kind = ends[0].entry->medium == "thunderbolt" ||
                          ends[1].entry->medium == "thunderbolt"
                      ? "thunderbolt"
                      : "ethernet";
      link.matchedBy = "subnet";
      link.subnet = subnet;
      link.a = {ends[0].host, ends[0].entry->name, ends[0].address,
                ends[0].entry->receptacle};
      link.b = {ends[1].host, ends[1].entry->name, ends[1].address,
                ends[1].entry->receptacle};
      link.speedGbps =
          slower(ends[0].entry->speedGbps, ends[1].entry->speedGbps);
      cluster.links.push_back(link);
      continue;
    }
    ClusterNetwork net;
    net.subnet = subnet;
    net.medium = ends[0].entry->medium;
    for (const SubnetEnd& e : ends)
      net.members.push_back({e.host, e.entry->name, e.address});
    cluster.networks.push_back(net);
  }
}

}  // namespace

void renumberWires(Cluster& cluster) {
  auto key = [](const ClusterLink& l) {
    return std::tie(l.a.host, l.b.host, l.a.receptacle, l.a.interface,
                    l.b.receptacle, l.b.interface, l.subnet);
  };
  std::sort(cluster.links.begin(), cluster.links.end(),
            [&](const ClusterLink& x, const ClusterLink& y) {
              return key(x) < key(y);
            });
  for (size_t i = 0; i < cluster.links.size(); ++i) {
    const ClusterLink& l = cluster.links[i];
    bool samePair = i > 0 && cluster.links[i - 1].a.host == l.a.host &&
                    cluster.links[i - 1].b.host == l.b.host;
    cluster.links[i].wire = samePair ? cluster.links[i - 1].wire + 1 : 0;
  }
}

Finding::Finding(std::string severityText, std::string whatText,
                 std::string whyText, std::string fixText,
                 std::vector<int> hostsAbout,
                 std::vector<std::pair<int, int>> pairsAbout)
    : severity(std::move(severityText)),
      what(std::move(whatText)),
      why(std::move(whyText)),
      fix(std::move(fixText)),
      hosts(std::move(hostsAbout)),
      pairs(std::move(pairsAbout)) {
  for (auto& [a, b] : pairs)
    if (a > b) std::swap(a, b);
}

int Cluster::hostOfRank(int rank) const {
  for (const ClusterHost& h : hosts)
    if (std::find(h.ranks.begin(), h.ranks.end(), rank) != h.ranks.end())
      return h.id;
  return -1;
}

int Cluster::cablesBetween(int i, int j) const {
  if (i > j) std::swap(i, j);
  int n = 0;
  for (const ClusterLink& l : links)
    if (l.a.host == i && l.b.host == j) ++n;
  return n;
}

Cluster buildCluster(const std::vector<HostInventory>& inventories,
                     const std::vector<std::vector<int>>& ranksOfHost) {
  Cluster cluster;
  for (size_t h = 0; h < inventories.size(); ++h) {
    ClusterHost host;
    host.id = static_cast<int>(h);
    host.name = inventories[h].name;
    host.identity = inventories[h].identity;
    if (h < ranksOfHost.size()) host.ranks = ranksOfHost[h];
    host.hasInventory = true;
    host.inventory = inventories[h];
    cluster.hosts.push_back(host);
  }
  addThunderboltCables(inventories, cluster);
  addSubnetLinks(inventories, cluster);
  renumberWires(cluster);
  cluster.shape = classifyShape(cluster);
  return cluster;
}

}  // namespace mcl::topology
