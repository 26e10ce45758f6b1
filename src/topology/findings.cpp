#include "topology/findings.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "topology/address_checks.h"
#include "topology/finding_text.h"
#include "topology/path_checks.h"
#include "topology/subnet.h"

namespace mcl::topology {

namespace {

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

// The Thunderbolt ports each host has put into a bridge: from ifconfig's
// members (macOS) or sysfs (Linux); a Mac whose bridge members are not
// known counts as bridging every port when Thunderbolt Bridge is on.
std::map<int, std::map<std::string, std::vector<std::string>>> bridgedPorts(
    const Cluster& c) {
  std::map<int, std::map<std::string, std::vector<std::string>>> out;
  for (const ClusterHost& h : c.hosts) {
    if (!h.hasInventory) continue;
    for (const InterfaceEntry& e : h.inventory.interfaces)
      if (!e.bridge.empty() && e.medium == "thunderbolt")
        out[h.id][e.bridge].push_back(e.name);
    if (h.inventory.bridgeActive && out.count(h.id) == 0)
      out[h.id][h.inventory.bridgeDevice];
  }
  return out;
}

// Without cables that detection confirmed (bridged ports have no address
// to match), hosts that each bridge two or more ports may close a loop.
bool mayLoop(
    const std::map<int, std::map<std::string, std::vector<std::string>>>&
        bridged) {
  size_t hosts = 0;
  size_t ports = 0;
  for (const auto& [host, bridges] : bridged) {
    size_t n = 0;
    for (const auto& [name, members] : bridges) n += members.size();
    if (n >= 2) {
      ++hosts;
      ports += n;
    }
  }
  return hosts >= 2 && ports >= 2 * hosts;
}

void checkBridge(Cluster& c, std::vector<Finding>& out) {
  const bool loop = hasCycle(c);
  const std::set<int> cabled = cabledHosts(c, true);
  const auto bridged = bridgedPorts(c);
  const bool suspected = !loop && mayLoop(bridged);
  for (const auto& [host, bridges] : bridged) {
    const ClusterHost& h = c.hosts[size_t(host)];
    const bool mac = looksLikeMac(h);
    for (const auto& [bridge, members] : bridges) {
      std::string ports;
      for (const std::string& m : members)
        ports += (ports.empty() ? "" : ", ") + m;
      const std::string name =
          (mac && bridge == h.inventory.bridgeDevice ? "Thunderbolt Bridge ("
                                                     : "bridge (") +
          bridge + ")";
      const std::string holding =
          ports.empty() ? "" : " with Thunderbolt ports " + ports;
      const std::string fix =
          mac ? "On that Mac: System Settings > Network > Thunderbolt Bridge "
                "> Make Inactive, or `sudo ifconfig " +
                    bridge + " down`"
              : "Take the ports out of the bridge and give each cable its "
                "own subnet: `sudo ip link set <port> nomaster`";
      if (loop) {
        out.push_back({"error",
                       name + " is on on " + hostLabel(c, host) + holding +
                           ", in a loop of cabled hosts",
                       "a bridge forwards broadcasts around the loop forever "
                       "(a broadcast storm) and takes the Thunderbolt ports' "
                       "addresses",
                       fix,
                       {host}});
      } else if (suspected && members.size() >= 2) {
        out.push_back({"warning",
                       name + " is on on " + hostLabel(c, host) + holding +
                           ", and other hosts bridge their ports too",
                       "the bridged ports have no addresses, so the cables "
                       "between them cannot be seen; if they close a loop, "
                       "every broadcast circles it forever (a storm)",
                       fix,
                       {host}});
      } else if (cabled.count(host) != 0 || !members.empty()) {
        out.push_back({"warning",
                       name + " is on on " + hostLabel(c, host) + holding,
                       "bridged ports are not separate links: they have no "
                       "address of their own, so each cable cannot get its "
                       "own subnet (and RDMA its GID), and traffic between "
                       "the hosts beyond them passes through this one",
                       fix,
                       {host}});
      }
    }
  }
}

// Another host of the job reached through a hub or dock: not a cable
// (RDMA needs a direct one), and its bandwidth is shared.
void checkHubs(Cluster& c, std::vector<Finding>& out) {
  std::map<std::string, int> hostOfPort;
  for (const ClusterHost& h : c.hosts)
    for (const ThunderboltPort& p : h.inventory.thunderboltPorts)
      hostOfPort[p.uuid] = h.id;
  std::set<std::pair<int, int>> reported;  // both Macs see the hub
  for (const ClusterHost& h : c.hosts)
    for (const ThunderboltPort& p : h.inventory.thunderboltPorts)
      for (size_t i = 0; i < p.peers.size(); ++i) {
        const ThunderboltPeer& peer = p.peers[i];
        auto it = hostOfPort.find(peer.uuid);
        if (peer.direct() || it == hostOfPort.end() || it->second == h.id ||
            !reported
                 .insert(
                     {std::min(h.id, it->second), std::max(h.id, it->second)})
                 .second)
          continue;
        std::string hub = "a hub or dock";
        for (size_t j = i; j-- > 0;)
          if (p.peers[j].depth == peer.depth - 1) {
            hub = p.peers[j].name;
            break;
          }
        out.push_back(
            {"warning",
             hostLabel(c, h.id) + " Thunderbolt " +
                 std::to_string(p.receptacle) + " reaches " +
                 hostLabel(c, it->second) + " through " + hub,
             "a hub or dock is not a cable between two Macs: RDMA needs a "
             "direct cable, mcl does not use the link, and the hub shares "
             "its bandwidth with everything plugged into it",
             "Cable the two Macs directly, port to port, with a Thunderbolt "
             "5 cable",
             {h.id, it->second},
             {{h.id, it->second}}});
      }
}

// A host with a port at Thunderbolt 5 speed can run its cables at it.
bool hasThunderbolt5(const ClusterHost& h) {
  for (const ThunderboltPort& p : h.inventory.thunderboltPorts)
    if (p.generation >= 5) return true;
  return false;
}

void checkThunderboltLinks(Cluster& c, const CheckOptions& o,
                           std::vector<Finding>& out) {
  for (const ClusterLink& l : c.links) {
    if (l.kind != "thunderbolt") continue;
    const bool tb5Hosts = hasThunderbolt5(c.hosts[size_t(l.a.host)]) &&
                          hasThunderbolt5(c.hosts[size_t(l.b.host)]);
    if (l.generation == 4 && tb5Hosts && !o.rdmaWanted)
      out.push_back({"warning",
                     "cable " + cableLabel(c, l) +
                         " runs at Thunderbolt 4 speed between Thunderbolt 5 "
                         "Macs",
                     "the cable (a Thunderbolt 4 or 3 cable, or a long "
                     "passive one) or a port that is not Thunderbolt 5 "
                     "halves the link: 40 Gb/s instead of 80",
                     "Use a Thunderbolt 5 cable between Thunderbolt 5 ports "
                     "(`system_profiler SPThunderboltDataType` shows \"Up to "
                     "80 Gb/s\" on both)",
                     {l.a.host, l.b.host},
                     {{l.a.host, l.b.host}}});
    else if (l.generation == 4)
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
      // A bridged port has no address of its own: the bridge's finding
      // says so.
      if (!h.hasInventory ||
          (entry != nullptr && (entry->hasIpv4() || !entry->bridge.empty())))
        continue;
      // The far end's /30 tells the exact address this end lacks.
      const LinkEnd& far = e == &l.a ? l.b : l.a;
      const ClusterHost& farHost = c.hosts[size_t(far.host)];
      const InterfaceEntry* farEntry =
          farHost.hasInventory ? farHost.inventory.findInterface(far.interface)
                               : nullptr;
      std::string peer;
      int prefix = 0;
      if (farEntry != nullptr)
        for (const InterfaceAddress& a : farEntry->addresses)
          if (peer.empty() && a.address.find(':') == std::string::npos) {
            peer = pointToPointPeer(a.address, a.prefixLength);
            prefix = a.prefixLength;
          }
      const std::string fix =
          !peer.empty() && entry != nullptr
              ? "Give it the other address of the far end's subnet: " +
                    setAddressCommand(h, *entry, peer, prefix)
              : "Give each cable its own /30, e.g. `sudo networksetup "
                "-setmanual \"Thunderbolt " +
                    std::to_string(e->receptacle) +
                    "\" 192.168.<cable>.<1|2> 255.255.255.252` (or "
                    "`sudo ipconfig set " +
                    e->interface + " DHCP` for a link-local address)";
      // Without a subnet both ends share, TCP cannot use the cable either.
      out.push_back(
          {o.rdmaWanted || l.subnet.empty() ? "error" : "warning",
           "Thunderbolt port " + endLabel(c, *e) + " has no IPv4 address",
           "RDMA needs the port's IPv4-mapped GID (modify_qp to "
           "RTR fails with EINVAL without it)" +
               std::string(l.subnet.empty() ? ", and TCP cannot use the cable"
                                            : ""),
           fix,
           {e->host},
           {{l.a.host, l.b.host}}});
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
  checkHubs(c, out);
  checkAddresses(c, options.rdmaWanted, out);
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
