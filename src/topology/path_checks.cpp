#include "topology/path_checks.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "topology/address_checks.h"
#include "topology/finding_text.h"

namespace mcl::topology {

namespace {

// A TCP path over something other than a cable (RDMA and shared memory
// never leave theirs).
bool leavesTheCables(const RankPath& p) {
  return p.transport == "tcp" && p.linkKind != "cable" &&
         p.linkKind != "loopback";
}

std::string pathText(const RankPath& p) {
  std::string via;
  for (const std::string& l : p.links) via += (via.empty() ? "" : ", ") + l;
  return p.linkKind + (via.empty() ? "" : " " + via);
}

const InterfaceEntry* interfaceOf(const Cluster& c, int host,
                                  const std::string& name) {
  if (host < 0 || host >= int(c.hosts.size())) return nullptr;
  const ClusterHost& h = c.hosts[size_t(host)];
  return h.hasInventory ? h.inventory.findInterface(name) : nullptr;
}

// The Wi-Fi interfaces a path uses ("local>remote" seen from host a).
std::string wifiOf(const Cluster& c, const RankPath& p, int ha, int hb) {
  std::string wifi;
  for (const std::string& link : p.links) {
    const size_t arrow = link.find('>');
    if (arrow == std::string::npos) continue;
    const std::pair<int, std::string> ends[2] = {{ha, link.substr(0, arrow)},
                                                 {hb, link.substr(arrow + 1)}};
    for (const auto& [host, name] : ends) {
      const InterfaceEntry* e = interfaceOf(c, host, name);
      if (e != nullptr && e->medium == "wifi")
        wifi += (wifi.empty() ? "" : ", ") + interfaceLabel(c, host, name);
    }
  }
  return wifi;
}

// The cables between two hosts, detected or suspected, as text.
std::string cablesOf(const Cluster& c, int ha, int hb, bool* suspectedOnly) {
  std::string names;
  for (const ClusterLink& l : c.links)
    if (l.a.host == std::min(ha, hb) && l.b.host == std::max(ha, hb))
      names +=
          (names.empty() ? "" : ", ") + endName(l.a) + "<->" + endName(l.b);
  *suspectedOnly = names.empty();
  if (!names.empty()) return names;
  for (const SuspectedCable& s : suspectedCables(c))
    if ((s.hostA == ha && s.hostB == hb) || (s.hostA == hb && s.hostB == ha))
      names +=
          (names.empty() ? "" : ", ") +
          (s.hostA == std::min(ha, hb) ? s.interfaceA + "<->" + s.interfaceB
                                       : s.interfaceB + "<->" + s.interfaceA) +
          " not configured";
  return names;
}

}  // namespace

std::string slowPathBetween(const Cluster& c, int hostA, int hostB) {
  for (const RankPath& p : c.paths) {
    const int ha = c.hostOfRank(p.a);
    const int hb = c.hostOfRank(p.b);
    if (leavesTheCables(p) &&
        ((ha == hostA && hb == hostB) || (ha == hostB && hb == hostA)))
      return pathText(p);
  }
  return "";
}

void checkPaths(const Cluster& c, std::vector<Finding>& out) {
  std::map<std::pair<int, int>, bool> reported;
  for (const RankPath& p : c.paths) {
    if (!leavesTheCables(p)) continue;
    const int ha = c.hostOfRank(p.a);
    const int hb = c.hostOfRank(p.b);
    if (ha == hb || ha < 0 || hb < 0) continue;
    if (!reported.emplace(std::pair{std::min(ha, hb), std::max(ha, hb)}, true)
             .second)
      continue;
    const std::string wifi = wifiOf(c, p, ha, hb);
    bool suspectedOnly = false;
    const std::string cables = cablesOf(c, ha, hb, &suspectedOnly);
    const std::string over = wifi.empty() ? "" : " (Wi-Fi: " + wifi + ")";
    if (!cables.empty()) {
      out.push_back(
          {"error",
           hostLabel(c, ha) + " and " + hostLabel(c, hb) + " are cabled (" +
               cables + "), but their traffic takes " + pathText(p) + over,
           "a cable is several times faster than a shared network (and than "
           "Wi-Fi by far); every step of a collective waits for the "
           "slowest pair",
           suspectedOnly
               ? "Configure the cable (see the finding about its far end), "
                 "then rerun `mcl-perf topo --check`"
               : "Check MCL_SOCKET_IFNAME (it must admit the cable's "
                 "interfaces) and that both ends of the cable have an "
                 "address in one subnet",
           {ha, hb},
           {{ha, hb}}});
    } else if (!wifi.empty()) {
      out.push_back(
          {"warning",
           hostLabel(c, ha) + " and " + hostLabel(c, hb) +
               " exchange data over Wi-Fi: " + pathText(p),
           "Wi-Fi is slow and jittery, and every step of a collective waits "
           "for its slowest packet",
           "Cable the hosts (Thunderbolt or Ethernet), or set "
           "MCL_SOCKET_IFNAME to a wired interface",
           {ha, hb},
           {{ha, hb}}});
    }
  }
}

}  // namespace mcl::topology
