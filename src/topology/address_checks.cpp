#include "topology/address_checks.h"

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "topology/down_cable_checks.h"
#include "topology/finding_text.h"
#include "topology/subnet.h"

namespace mcl::topology {

namespace {

struct Port {
  int host = -1;
  const InterfaceEntry* entry = nullptr;
};

bool wiredMedium(const InterfaceEntry& e) {
  return e.medium == "ethernet" || e.medium == "thunderbolt";
}

bool isCableEnd(const Cluster& c, int host, const std::string& name) {
  for (const ClusterLink& l : c.links)
    if ((l.a.host == host && l.a.interface == name) ||
        (l.b.host == host && l.b.interface == name))
      return true;
  return false;
}

// A port that could be one end of a cable: wired, up, not in a bridge.
bool loosePort(const Cluster& c, int host, const InterfaceEntry& e) {
  return wiredMedium(e) && e.up && e.bridge.empty() &&
         !isCableEnd(c, host, e.name);
}

// The point-to-point address (/30, /31, /126, /127) of an interface.
const InterfaceAddress* pointToPointAddress(const InterfaceEntry& e) {
  for (const InterfaceAddress& a : e.addresses)
    if (!isLinkLocal(a.address) &&
        isPointToPointPrefix(a.address, a.prefixLength))
      return &a;
  return nullptr;
}

std::string withPrefix(const InterfaceAddress& a) {
  return a.address + "/" + std::to_string(a.prefixLength);
}

std::string portName(const Cluster& c, const Port& p) {
  return interfaceLabel(c, p.host, p.entry->name);
}

// Another host has an address in this subnet: the far end is there (a
// cable the cluster's links leave out, as a forced topology file may).
bool answeredElsewhere(const Cluster& c, int host, const InterfaceAddress& a) {
  const std::string subnet = subnetOf(a.address, a.prefixLength);
  for (const ClusterHost& h : c.hosts) {
    if (!h.hasInventory || h.id == host) continue;
    for (const InterfaceEntry& e : h.inventory.interfaces)
      for (const InterfaceAddress& b : e.addresses)
        if (e.up && b.prefixLength == a.prefixLength &&
            subnetOf(b.address, b.prefixLength) == subnet)
          return true;
  }
  return false;
}

// Ports with a cable's address that no cable uses and nobody answers.
std::vector<Port> danglingEnds(const Cluster& c) {
  std::vector<Port> out;
  for (const ClusterHost& h : c.hosts) {
    if (!h.hasInventory) continue;
    for (const InterfaceEntry& e : h.inventory.interfaces) {
      const InterfaceAddress* a = pointToPointAddress(e);
      if (loosePort(c, h.id, e) && a != nullptr &&
          !answeredElsewhere(c, h.id, *a))
        out.push_back({h.id, &e});
    }
  }
  return out;
}

// Ports of other hosts that could be the far end of `end`: the same
// medium, up with a link, and no address (or a point-to-point one).
std::vector<Port> farEndCandidates(const Cluster& c, const Port& end) {
  std::vector<Port> out;
  for (const ClusterHost& h : c.hosts) {
    if (!h.hasInventory || h.id == end.host) continue;
    for (const InterfaceEntry& e : h.inventory.interfaces) {
      if (!loosePort(c, h.id, e) || !e.carrier || e.medium != end.entry->medium)
        continue;
      if (!e.hasRoutableAddress() || pointToPointAddress(e) != nullptr)
        out.push_back({h.id, &e});
    }
  }
  return out;
}

bool allPairsCabled(const Cluster& c) {
  for (size_t a = 0; a < c.hosts.size(); ++a)
    for (size_t b = a + 1; b < c.hosts.size(); ++b)
      if (c.cablesBetween(int(a), int(b)) == 0) return false;
  return true;
}

void checkDangling(const Cluster& c, std::vector<Finding>& out,
                   std::set<std::pair<int, std::string>> reported) {
  for (const Port& end : danglingEnds(c)) {
    if (reported.count({end.host, end.entry->name}) != 0) continue;
    const InterfaceAddress& a = *pointToPointAddress(*end.entry);
    const std::string peer = pointToPointPeer(a.address, a.prefixLength);
    if (!end.entry->carrier) {
      out.push_back({"info",
                     portName(c, end) + " has a cable's address (" +
                         withPrefix(a) + ") but no link",
                     "nothing is plugged in, or the far port is off",
                     "Plug the cable in, or remove the address from a port "
                     "that is not used",
                     {end.host}});
      continue;
    }
    std::vector<Port> candidates = farEndCandidates(c, end);
    const Port* sameMisfit = nullptr;  // a far end in another subnet
    for (const Port& p : candidates)
      if (pointToPointAddress(*p.entry) != nullptr) sameMisfit = &p;
    // Two hosts that have a cable already: the loose ends more likely go
    // to hosts outside this job than to each other.
    if (sameMisfit != nullptr &&
        c.cablesBetween(end.host, sameMisfit->host) > 0)
      sameMisfit = nullptr;
    if (candidates.size() == 1 && sameMisfit != nullptr) {
      const Port& far = *sameMisfit;
      const InterfaceAddress& b = *pointToPointAddress(*far.entry);
      reported.insert({far.host, far.entry->name});
      out.push_back(
          {"error",
           portName(c, end) + " (" + withPrefix(a) + ") and " +
               portName(c, far) + " (" + withPrefix(b) +
               ") look like the two ends of one cable, in different subnets",
           "neither end answers in the other's subnet, so the cable "
           "carries nothing and the two hosts talk over a slower network",
           "Put both ends in one subnet: on " + hostLabel(c, far.host) +
               " replace " + withPrefix(b) + " with " + peer + "/" +
               std::to_string(a.prefixLength) + ", " +
               setAddressCommand(c.hosts[size_t(far.host)], *far.entry, peer,
                                 a.prefixLength),
           {end.host, far.host},
           {{end.host, far.host}}});
      continue;
    }
    std::vector<Port> bare;
    for (const Port& p : candidates)
      if (!p.entry->hasRoutableAddress()) bare.push_back(p);
    if (bare.empty()) {
      // Where every pair of the job's hosts has a cable, the port most
      // likely reaches a host outside the job; where some pair has none,
      // this may be the cable it lacks.
      out.push_back(
          {allPairsCabled(c) ? "info" : "warning",
           portName(c, end) + " has " + withPrefix(a) +
               ", a cable's own subnet, but no host of this job answers in "
               "it",
           "the far end has no address or is down, the cable is unplugged "
           "there, or it goes to a host outside this job",
           "Give the far end " + peer + "/" + std::to_string(a.prefixLength) +
               " (then `mcl-perf qualify` tests the cable)",
           {end.host}});
      continue;
    }
    std::string names;
    std::vector<int> hosts = {end.host};
    std::vector<std::pair<int, int>> pairs;
    for (const Port& p : bare) {
      names += (names.empty() ? "" : " or ") + portName(c, p);
      hosts.push_back(p.host);
      pairs.push_back({end.host, p.host});
      reported.insert({p.host, p.entry->name});
    }
    const Port& far = bare.front();
    out.push_back(
        {"error",
         portName(c, end) + " has " + withPrefix(a) +
             ", a cable's own subnet, but its far end has no address: " +
             names + (bare.size() == 1 ? " is" : " are") +
             " up with a link and no address",
         "a cable whose far Mac was never configured carries nothing: the "
         "two hosts talk over another network (often Wi-Fi), several "
         "times slower",
         "Give " + portName(c, far) + " the other address of the subnet: " +
             setAddressCommand(c.hosts[size_t(far.host)], *far.entry, peer,
                               a.prefixLength),
         hosts, pairs});
  }
}

struct Member {
  int host;
  const InterfaceEntry* entry;
};

std::string memberNames(const std::vector<Member>& members, int host) {
  std::string s;
  for (const Member& m : members)
    if (m.host == host) s += (s.empty() ? "" : ", ") + m.entry->name;
  return s;
}

// Several interfaces of a host in one subnet, and Thunderbolt links of
// several hosts in one subnet: one finding per subnet.
void checkSharedSubnets(const Cluster& c, std::vector<Finding>& out) {
  std::map<std::string, std::vector<Member>> bySubnet;
  for (const ClusterHost& h : c.hosts) {
    if (!h.hasInventory) continue;
    for (const InterfaceEntry& e : h.inventory.interfaces) {
      if (e.medium == "loopback" || !e.up || !e.bridge.empty()) continue;
      std::set<std::string> seen;  // an interface counts once per subnet
      for (const InterfaceAddress& a : e.addresses) {
        if (isLinkLocal(a.address)) continue;
        std::string s = subnetOf(a.address, a.prefixLength);
        if (!s.empty() && seen.insert(s).second)
          bySubnet[s].push_back({h.id, &e});
      }
    }
  }
  const std::string giveEach =
      "Give each cable its own /30, e.g. 192.168.<cable>.1 and "
      "192.168.<cable>.2 with netmask 255.255.255.252 (`sudo networksetup "
      "-setmanual \"Thunderbolt N\" ...` on a Mac, `sudo ip addr replace "
      "... dev IF` on Linux)";
  std::set<std::string> cableSubnets;
  for (const ClusterLink& l : c.links) cableSubnets.insert(l.subnet);
  for (const auto& [subnet, members] : bySubnet) {
    if (members.size() == 2 && cableSubnets.count(subnet) != 0) continue;
    std::map<int, int> perHost;
    int thunderbolt = 0;
    bool allWired = true;
    for (const Member& m : members) {
      ++perHost[m.host];
      thunderbolt += m.entry->medium == "thunderbolt";
      allWired &= wiredMedium(*m.entry);
    }
    std::vector<int> hosts;
    bool multi = false;
    for (const auto& [h, n] : perHost) {
      hosts.push_back(h);
      multi |= n > 1;
    }
    if (hosts.size() == 2 && allWired && perHost[hosts[0]] > 1 &&
        perHost[hosts[0]] == perHost[hosts[1]]) {
      const int n = perHost[hosts[0]];
      out.push_back(
          {"error",
           hostLabel(c, hosts[0]) + " " + memberNames(members, hosts[0]) +
               " and " + hostLabel(c, hosts[1]) + " " +
               memberNames(members, hosts[1]) + ": " + std::to_string(n) +
               " cables in one subnet, " + subnet,
           "routing sends everything for a subnet through one interface, so "
           "one cable carries all the traffic (or none of it), and mcl "
           "cannot tell the cables apart: it sees a shared network, not " +
               std::to_string(n) + " cables",
           giveEach,
           hosts,
           {{hosts[0], hosts[1]}}});
      continue;
    }
    if (thunderbolt >= 2 && hosts.size() >= 2) {
      std::string names;
      for (const Member& m : members)
        if (m.entry->medium == "thunderbolt")
          names += (names.empty() ? "" : ", ") +
                   interfaceLabel(c, m.host, m.entry->name);
      out.push_back(
          {"error",
           "Thunderbolt links share one subnet, " + subnet + ": " + names,
           "a cable joins just two Macs; in a shared subnet a host sends "
           "to every peer through the one interface its route names, so "
           "peers on the other cables are unreachable or take a detour",
           giveEach, hosts});
      continue;
    }
    if (!multi) continue;
    for (const auto& [h, n] : perHost) {
      if (n < 2) continue;
      out.push_back(
          {"warning",
           hostLabel(c, h) + " has " + std::to_string(n) +
               " interfaces in one subnet, " + subnet + " (" +
               memberNames(members, h) + ")",
           "the routing table sends all traffic for the subnet through one "
           "of them; the others carry nothing, and answers may come back "
           "over the wrong one",
           "Give each cable its own subnet (a /30 per cable), or bond the "
           "interfaces into one",
           {h}});
    }
  }
}

void checkMtu(const Cluster& c, std::vector<Finding>& out) {
  for (const ClusterLink& l : c.links) {
    const ClusterHost& ha = c.hosts[size_t(l.a.host)];
    const ClusterHost& hb = c.hosts[size_t(l.b.host)];
    if (!ha.hasInventory || !hb.hasInventory) continue;
    const InterfaceEntry* a = ha.inventory.findInterface(l.a.interface);
    const InterfaceEntry* b = hb.inventory.findInterface(l.b.interface);
    if (a == nullptr || b == nullptr || a->mtu <= 0 || b->mtu <= 0 ||
        a->mtu == b->mtu)
      continue;
    const InterfaceEntry* small = a->mtu < b->mtu ? a : b;
    const InterfaceEntry* large = small == a ? b : a;
    const ClusterHost& hl = small == a ? hb : ha;
    const std::string setMtu =
        looksLikeMac(hl) ? "`sudo networksetup -setMTU " + large->name + " " +
                               std::to_string(small->mtu) + "`"
                         : "`sudo ip link set " + large->name + " mtu " +
                               std::to_string(small->mtu) + "`";
    out.push_back(
        {"warning",
         "cable " + cableLabel(c, l) + ": MTU " + std::to_string(a->mtu) +
             " at " + l.a.interface + ", " + std::to_string(b->mtu) + " at " +
             l.b.interface,
         "frames larger than the smaller MTU are dropped at that end: "
         "connections stall or fall back to small segments",
         "Set one MTU at both ends, e.g. on " + hostLabel(c, hl.id) + " " +
             setMtu + " (or raise the other end)",
         {l.a.host, l.b.host},
         {{l.a.host, l.b.host}}});
  }
}

// RDMA over Thunderbolt addresses queue pairs by the port's IPv4-mapped
// GID. Ends of Thunderbolt cables are checked with the cables.
void checkRdmaGid(const Cluster& c, bool rdmaWanted,
                  std::vector<Finding>& out) {
  for (const ClusterHost& h : c.hosts) {
    if (!h.hasInventory) continue;
    for (const RdmaDevice& d : h.inventory.rdmaDevices) {
      if (!d.active || d.netdev.empty()) continue;
      const InterfaceEntry* e = h.inventory.findInterface(d.netdev);
      if (e == nullptr || e->hasIpv4()) continue;
      bool tbCable = false;
      for (const ClusterLink& l : c.links)
        tbCable |= l.kind == "thunderbolt" &&
                   ((l.a.host == h.id && l.a.interface == d.netdev) ||
                    (l.b.host == h.id && l.b.interface == d.netdev));
      if (tbCable) continue;
      out.push_back(
          {rdmaWanted ? "error" : "warning",
           "RDMA device " + d.name + " on " + hostLabel(c, h.id) + " sits on " +
               d.netdev + ", which has no IPv4 address",
           "RDMA needs the port's IPv4-mapped GID (::ffff:a.b.c.d): without "
           "it connecting a queue pair fails (modify_qp to RTR: EINVAL)",
           "Give " + d.netdev +
               " an IPv4 address (a /30 per cable; a "
               "link-local 169.254/16 address works too)",
           {h.id}});
    }
  }
}

}  // namespace

std::vector<SuspectedCable> suspectedCables(const Cluster& c) {
  std::vector<SuspectedCable> out;
  for (const Port& end : danglingEnds(c)) {
    if (!end.entry->carrier) continue;
    for (const Port& far : farEndCandidates(c, end))
      out.push_back({end.host, end.entry->name, far.host, far.entry->name});
  }
  return out;
}

void checkAddresses(const Cluster& c, bool rdmaWanted,
                    std::vector<Finding>& out) {
  // A cable down at one end is said once, naming both ends.
  std::set<std::pair<int, std::string>> downEnds;
  checkDownCables(c, out, downEnds);
  checkDangling(c, out, std::move(downEnds));
  checkSharedSubnets(c, out);
  checkMtu(c, out);
  checkRdmaGid(c, rdmaWanted, out);
}

}  // namespace mcl::topology
