#include "topology/findings.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace mcl::topology {

namespace {

std::string hostLabel(const Cluster& c, int h) {
  if (h < 0 || h >= static_cast<int>(c.hosts.size()))
    return "host " + std::to_string(h);
  return "host " + std::to_string(h) + " (" + c.hosts[size_t(h)].name + ")";
}

std::string endLabel(const Cluster& c, const LinkEnd& e) {
  std::string s = hostLabel(c, e.host) + " ";
  if (!e.interface.empty()) return s + e.interface;
  if (e.receptacle > 0)
    return s + "Thunderbolt " + std::to_string(e.receptacle);
  return s + e.address;
}

std::string cableLabel(const Cluster& c, const ClusterLink& l) {
  return endLabel(c, l.a) + " <-> " + endLabel(c, l.b);
}

// A loop of cables: union-find meets a cable whose ends are already
// joined. Two cables between one pair are a loop too (a bridge on both
// Macs forwards each broadcast back over the other cable).
bool hasCycle(const Cluster& c) {
  std::vector<int> parent(c.hosts.size());
  for (size_t i = 0; i < parent.size(); ++i) parent[i] = static_cast<int>(i);
  auto root = [&](int x) {
    while (parent[size_t(x)] != x) x = parent[size_t(x)];
    return x;
  };
  for (const ClusterLink& l : c.links) {
    int a = l.a.host, b = l.b.host;
    if (a < 0 || b < 0 || a >= int(parent.size()) || b >= int(parent.size()))
      continue;
    int ra = root(a), rb = root(b);
    if (ra == rb) return true;
    parent[size_t(ra)] = rb;
  }
  return false;
}

std::set<int> cabledHosts(const Cluster& c, bool thunderboltOnly) {
  std::set<int> out;
  for (const ClusterLink& l : c.links)
    if (!thunderboltOnly || l.kind == "thunderbolt") {
      out.insert(l.a.host);
      out.insert(l.b.host);
    }
  return out;
}

void checkDetection(Cluster& c, std::vector<Finding>& out) {
  for (const ClusterHost& h : c.hosts)
    for (const std::string& p : h.inventory.problems)
      out.push_back({"warning",
                     "cabling detection incomplete on " + hostLabel(c, h.id), p,
                     "Run the command by hand on that host to see why, or "
                     "describe the cables in a file and set MCL_TOPO_FILE"});
}

void checkBridge(Cluster& c, std::vector<Finding>& out) {
  bool loop = hasCycle(c);
  std::set<int> cabled = cabledHosts(c, true);
  for (const ClusterHost& h : c.hosts) {
    if (!h.inventory.bridgeActive) continue;
    if (loop) {
      out.push_back(
          {"error",
           "Thunderbolt Bridge (" + h.inventory.bridgeDevice + ") is on on " +
               hostLabel(c, h.id) + " in a loop of cabled Macs",
           "a bridge forwards broadcasts around the loop forever (a "
           "broadcast storm) and takes the Thunderbolt ports' addresses",
           "On that Mac: System Settings > Network > Thunderbolt Bridge > "
           "Make Inactive, or `sudo ifconfig " +
               h.inventory.bridgeDevice + " down`"});
    } else if (cabled.count(h.id) != 0) {
      out.push_back({"warning",
                     "Thunderbolt Bridge (" + h.inventory.bridgeDevice +
                         ") is on on " + hostLabel(c, h.id),
                     "bridged ports have no address of their own, so each "
                     "cable cannot get its own subnet (and RDMA its GID)",
                     "System Settings > Network > Thunderbolt Bridge > Make "
                     "Inactive"});
    }
  }
}

void checkThunderboltLinks(Cluster& c, const CheckOptions& o,
                           std::vector<Finding>& out) {
  const std::string level = o.rdmaWanted ? "error" : "warning";
  for (const ClusterLink& l : c.links) {
    if (l.kind != "thunderbolt") continue;
    if (l.generation == 4)
      out.push_back({o.rdmaWanted ? "error" : "info",
                     "cable " + cableLabel(c, l) + " runs at Thunderbolt 4",
                     "RDMA over Thunderbolt needs Thunderbolt 5 on both Macs "
                     "and a TB5 cable; TB4 ports show RDMA devices that "
                     "cannot work",
                     "Use a Thunderbolt 5 port and cable at both ends, or "
                     "run over TCP (MCL_TRANSPORT=tcp)"});
    for (const LinkEnd* e : {&l.a, &l.b}) {
      if (e->interface.empty()) {
        out.push_back({"warning",
                       "cable " + cableLabel(c, l) + ": " + endLabel(c, *e) +
                           " has no network interface",
                       "networksetup lists no \"Thunderbolt " +
                           std::to_string(e->receptacle) +
                           "\" port, so the cable carries no IP traffic",
                       "Add it: System Settings > Network > ... > Add "
                       "Service > Thunderbolt " +
                           std::to_string(e->receptacle)});
        continue;
      }
      const ClusterHost& h = c.hosts[size_t(e->host)];
      const InterfaceEntry* entry =
          h.hasInventory ? h.inventory.findInterface(e->interface) : nullptr;
      if (h.hasInventory && (entry == nullptr || !entry->hasIpv4()))
        out.push_back(
            {level,
             "Thunderbolt port " + endLabel(c, *e) + " has no IPv4 address",
             "RDMA needs the port's IPv4-mapped GID (modify_qp to "
             "RTR fails with EINVAL without it), and TCP cannot "
             "use the cable",
             "Give each cable its own /30, e.g. `sudo networksetup "
             "-setmanual \"Thunderbolt " +
                 std::to_string(e->receptacle) +
                 "\" 192.168.<cable>.<1|2> 255.255.255.252` (or "
                 "`sudo ipconfig set " +
                 e->interface + " DHCP` for a link-local address)"});
    }
  }
}

void checkRdma(Cluster& c, const CheckOptions& o, std::vector<Finding>& out) {
  std::set<int> cabled = cabledHosts(c, true);
  for (const ClusterHost& h : c.hosts) {
    if (!h.hasInventory || cabled.count(h.id) == 0) continue;
    const std::string& state = h.inventory.rdmaState;
    std::string severity = o.rdmaWanted ? "error" : "info";
    if (state == "disabled")
      out.push_back({severity, "RDMA is disabled on " + hostLabel(c, h.id),
                     "Thunderbolt RDMA is off until enabled from recoveryOS",
                     "Boot into recoveryOS, run `rdma_ctl enable` in "
                     "Terminal, reboot; `rdma_ctl status` then says enabled"});
    else if (state == "none" ||
             (state == "enabled" && h.inventory.rdmaDevices.empty() &&
              o.rdmaWanted))
      out.push_back({severity, "no RDMA devices on " + hostLabel(c, h.id),
                     "RDMA needs macOS 26.2+, Thunderbolt 5 ports and RDMA "
                     "enabled; a device can also be missing after a bad boot",
                     "Check `rdma_ctl status` and `ibv_devices`; reboot if "
                     "RDMA is enabled but no device shows"});
  }
}

void checkPaths(Cluster& c, std::vector<Finding>& out) {
  std::set<std::pair<int, int>> reported;
  for (const RankPath& p : c.paths) {
    if (p.transport != "tcp" || p.linkKind == "cable") continue;
    int ha = c.hostOfRank(p.a);
    int hb = c.hostOfRank(p.b);
    if (ha == hb || c.cablesBetween(ha, hb) == 0) continue;
    if (!reported.insert({std::min(ha, hb), std::max(ha, hb)}).second) continue;
    std::string via;
    for (const std::string& l : p.links) via += (via.empty() ? "" : ", ") + l;
    out.push_back({"warning",
                   hostLabel(c, ha) + " and " + hostLabel(c, hb) +
                       " share a cable, but their traffic takes " + p.linkKind +
                       " " + via,
                   "the cable carries most of the bandwidth; the other "
                   "interface is a few times slower",
                   "Check MCL_SOCKET_IFNAME (it must admit the cable's "
                   "interfaces) and that both ends of the cable have an "
                   "address in one subnet"});
  }
}

// Each side counts the direct Thunderbolt peers that are ports of the other
// host; a cable seen from one side only means a bad cable, a port that lost
// its link, or stale data, and ranks would disagree on the wires.
void checkCableCounts(Cluster& c, std::vector<Finding>& out) {
  std::map<std::string, int> hostOfPort;
  for (const ClusterHost& h : c.hosts)
    for (const ThunderboltPort& p : h.inventory.thunderboltPorts)
      hostOfPort[p.uuid] = h.id;
  std::map<std::pair<int, int>, int> seen;  // (from, to) -> cables
  for (const ClusterHost& h : c.hosts)
    for (const ThunderboltPort& p : h.inventory.thunderboltPorts)
      for (const ThunderboltPeer& peer : p.peers) {
        auto it = hostOfPort.find(peer.uuid);
        if (peer.direct() && it != hostOfPort.end() && it->second != h.id)
          ++seen[{h.id, it->second}];
      }
  for (const auto& [pair, n] : seen) {
    auto [i, j] = pair;
    int back = seen.count({j, i}) ? seen[{j, i}] : 0;
    if (i > j && back > 0) continue;  // reported from the other side
    if (n == back) continue;
    out.push_back({"error",
                   hostLabel(c, i) + " counts " + std::to_string(n) +
                       " cable(s) to " + hostLabel(c, j) + ", which counts " +
                       std::to_string(back) + " back",
                   "the two ends disagree on the cabling (a cable that lost "
                   "its link on one side, a port that needs re-seating, or "
                   "stale data), so they may not agree on the wires",
                   "Re-seat the cables between the two Macs and compare "
                   "`system_profiler SPThunderboltDataType` on both"});
  }
}

int rank(const std::string& severity) {
  return severity == "error" ? 0 : severity == "warning" ? 1 : 2;
}

}  // namespace

void addFindings(Cluster& c, const CheckOptions& options) {
  std::vector<Finding> out;
  checkDetection(c, out);
  checkBridge(c, out);
  checkThunderboltLinks(c, options, out);
  checkRdma(c, options, out);
  checkPaths(c, out);
  checkCableCounts(c, out);
  checkHostLimits(c, options.hostNeeds, out);
  c.findings.insert(c.findings.end(), out.begin(), out.end());
  std::stable_sort(c.findings.begin(), c.findings.end(),
                   [](const Finding& x, const Finding& y) {
                     return rank(x.severity) < rank(y.severity);
                   });
}

bool hasErrors(const Cluster& c) {
  for (const Finding& f : c.findings)
    if (f.severity == "error") return true;
  return false;
}

}  // namespace mcl::topology
