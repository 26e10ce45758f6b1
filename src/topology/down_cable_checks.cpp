#include "topology/down_cable_checks.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "topology/finding_text.h"
#include "topology/subnet.h"

namespace mcl::topology {

namespace {

struct End {
  int host = -1;
  const InterfaceEntry* entry = nullptr;
  const InterfaceAddress* address = nullptr;
};

// Wired ports outside bridges with a cable's own (point-to-point) address.
std::vector<End> cableEnds(const Cluster& c) {
  std::vector<End> out;
  for (const ClusterHost& h : c.hosts) {
    if (!h.hasInventory) continue;
    for (const InterfaceEntry& e : h.inventory.interfaces) {
      if ((e.medium != "ethernet" && e.medium != "thunderbolt") ||
          !e.bridge.empty())
        continue;
      for (const InterfaceAddress& a : e.addresses)
        if (!isLinkLocal(a.address) &&
            isPointToPointPrefix(a.address, a.prefixLength)) {
          out.push_back({h.id, &e, &a});
          break;
        }
    }
  }
  return out;
}

std::string endText(const Cluster& c, const End& e) {
  return interfaceLabel(c, e.host, e.entry->name) + " (" + e.address->address +
         "/" + std::to_string(e.address->prefixLength) + ")";
}

std::string stateText(const Cluster& c, const End& e) {
  const std::string host = hostLabel(c, e.host);
  if (!e.entry->up) return host + "'s end is switched off (interface down)";
  if (!e.entry->carrier) return host + "'s end has no link";
  return host + "'s end is up with a link";
}

const InterfaceEntry* entryOf(const Cluster& c, int host,
                              const std::string& name) {
  if (host < 0 || size_t(host) >= c.hosts.size()) return nullptr;
  for (const InterfaceEntry& e : c.hosts[size_t(host)].inventory.interfaces)
    if (e.name == name) return &e;
  return nullptr;
}

bool works(const InterfaceEntry* e) {
  return e != nullptr && e->up && e->carrier;
}

// Cables the cluster sees between the two hosts that work (both ends up,
// with a link), this one aside.
int otherCables(const Cluster& c, const End& a, const End& b) {
  int n = 0;
  for (const ClusterLink& l : c.links) {
    const bool between = (l.a.host == a.host && l.b.host == b.host) ||
                         (l.a.host == b.host && l.b.host == a.host);
    const bool same = (l.a.host == a.host && l.a.interface == a.entry->name) ||
                      (l.b.host == a.host && l.b.interface == a.entry->name);
    if (between && !same && works(entryOf(c, l.a.host, l.a.interface)) &&
        works(entryOf(c, l.b.host, l.b.interface)))
      ++n;
  }
  return n;
}

// An end that a detected cable to a third host already uses: its address
// is a leftover, not this cable's.
bool inOtherCable(const Cluster& c, const End& e, int peerHost) {
  for (const ClusterLink& l : c.links)
    if ((l.a.host == e.host && l.a.interface == e.entry->name &&
         l.b.host != peerHost) ||
        (l.b.host == e.host && l.b.interface == e.entry->name &&
         l.a.host != peerHost))
      return true;
  return false;
}

std::string switchOn(const Cluster& c, const End& e) {
  const ClusterHost& h = c.hosts[size_t(e.host)];
  return e.entry->name + " on " + hostLabel(c, e.host) + " (`sudo " +
         (looksLikeMac(h) ? "ifconfig " + e.entry->name + " up"
                          : "ip link set " + e.entry->name + " up") +
         "`)";
}

}  // namespace

void checkDownCables(const Cluster& c, std::vector<Finding>& out,
                     std::set<std::pair<int, std::string>>& named) {
  // By subnet: a cable's subnet holds its two ends and nothing else.
  std::map<std::string, std::vector<End>> bySubnet;
  for (const End& e : cableEnds(c))
    bySubnet[subnetOf(e.address->address, e.address->prefixLength)].push_back(
        e);
  for (const auto& [subnet, ends] : bySubnet) {
    if (subnet.empty() || ends.size() != 2) continue;
    const End& a = ends[0];
    const End& b = ends[1];
    if (a.host == b.host ||
        a.address->prefixLength != b.address->prefixLength ||
        a.address->address == b.address->address ||
        inOtherCable(c, a, b.host) || inOtherCable(c, b, a.host))
      continue;
    const bool aWorks = a.entry->up && a.entry->carrier;
    const bool bWorks = b.entry->up && b.entry->carrier;
    if (aWorks && bWorks) continue;
    const int others = otherCables(c, a, b);
    const std::pair<int, int> pair = {std::min(a.host, b.host),
                                      std::max(a.host, b.host)};
    out.push_back(
        {others > 0 ? "warning" : "error",
         "the cable between " + endText(c, a) + " and " + endText(c, b) +
             " is down: " + stateText(c, a) + ", " + stateText(c, b),
         others > 0 ? "traffic between the two hosts runs on their " +
                          std::to_string(others) +
                          " other cable(s) alone, with that much less bandwidth"
                    : "it was the two hosts' only cable: their traffic takes a "
                      "LAN or routed path, several times slower, or nothing",
         "Plug the cable in firmly at both ends (no hub)" +
             (a.entry->up && b.entry->up ? std::string()
              : !a.entry->up && !b.entry->up
                  ? ", and switch both ports on: " + switchOn(c, a) + " and " +
                        switchOn(c, b)
                  : ", and switch the port on: " +
                        switchOn(c, a.entry->up ? b : a)) +
             "; then rerun `mcl-perf topo --check`",
         {a.host, b.host},
         {pair}});
    named.insert({a.host, a.entry->name});
    named.insert({b.host, b.entry->name});
  }
}

}  // namespace mcl::topology
