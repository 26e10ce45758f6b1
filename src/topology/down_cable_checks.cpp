#include "topology/down_cable_checks.h"

#include <algorithm>
#include <cstddef>
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

// Cables the cluster sees between the two hosts, this one's ends aside.
int otherCables(const Cluster& c, const End& a, const End& b) {
  int n = 0;
  for (const ClusterLink& l : c.links) {
    const bool between = (l.a.host == a.host && l.b.host == b.host) ||
                         (l.a.host == b.host && l.b.host == a.host);
    const bool same = (l.a.host == a.host && l.a.interface == a.entry->name) ||
                      (l.b.host == a.host && l.b.interface == a.entry->name);
    if (between && !same) ++n;
  }
  return n;
}

}  // namespace

void checkDownCables(const Cluster& c, std::vector<Finding>& out,
                     std::set<std::pair<int, std::string>>& named) {
  const std::vector<End> ends = cableEnds(c);
  for (size_t i = 0; i < ends.size(); ++i)
    for (size_t j = i + 1; j < ends.size(); ++j) {
      const End& a = ends[i];
      const End& b = ends[j];
      if (a.host == b.host ||
          a.address->prefixLength != b.address->prefixLength ||
          subnetOf(a.address->address, a.address->prefixLength) !=
              subnetOf(b.address->address, b.address->prefixLength))
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
           others > 0
               ? "traffic between the two hosts runs on their " +
                     std::to_string(others) +
                     " other cable(s) alone, with that much less bandwidth"
               : "it was the two hosts' only cable: their traffic takes a "
                 "LAN or routed path, several times slower, or nothing",
           "Plug the cable in firmly at both ends (no hub)" +
               (a.entry->up && b.entry->up
                    ? std::string()
                    : ", and switch the port on (on " +
                          hostLabel(c, a.entry->up ? b.host : a.host) +
                          ", Linux: `sudo ip link set " +
                          (a.entry->up ? b.entry->name : a.entry->name) +
                          " up`)") +
               "; then rerun `mcl-perf topo --check`",
           {a.host, b.host},
           {pair}});
      named.insert({a.host, a.entry->name});
      named.insert({b.host, b.entry->name});
    }
}

}  // namespace mcl::topology
