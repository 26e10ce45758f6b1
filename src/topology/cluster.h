// The cluster as every rank sees it after init: hosts with their ranks, every
// cable between two hosts (a doubled pair is two links, each its own wire),
// the shared networks (LAN, Wi-Fi), the shape of the cabling, the path each
// pair of ranks takes, and what the checks found. Built the same on every
// rank from the all-gathered inventories, or loaded from MCL_TOPO_FILE.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "topology/inventory.h"

namespace mcl::topology {

struct ClusterHost {
  int id = 0;        // index in Cluster::hosts; hosts ordered by lowest rank
  std::string name;  // host name (may repeat, e.g. network namespaces)
  std::string identity;  // platform::hostIdentity() of that host
  std::vector<int> ranks;
  bool hasInventory = false;  // false when loaded from a file without one
  HostInventory inventory;
};

struct LinkEnd {
  int host = -1;
  std::string interface;  // "en2"; may be empty when only the port is known
  std::string address;    // IPv4 if it has one, else IPv6, else empty
  int receptacle = 0;     // Thunderbolt port number, 0 when unknown
};

struct ClusterLink {
  LinkEnd a;  // a.host < b.host
  LinkEnd b;
  std::string kind;       // "thunderbolt" or "ethernet"
  double speedGbps = 0;   // per direction; 0 when unknown
  int generation = 0;     // Thunderbolt 4 or 5; 0 otherwise
  int wire = 0;           // 0, 1, ... among the cables of this pair of hosts
  std::string subnet;     // "10.77.0.0/30"; empty when the ends share none
  std::string matchedBy;  // "port_uuid", "subnet" or "file"
};

struct NetworkMember {
  int host = -1;
  std::string interface;
  std::string address;
};

// A subnet three or more hosts share, or two hosts over a medium that is not
// a cable (Wi-Fi, a switch): traffic between its members is routed by a
// switch, so its bandwidth is shared.
struct ClusterNetwork {
  std::string subnet;
  std::string medium;  // of the first member's interface
  std::vector<NetworkMember> members;
};

// How one pair of ranks talks.
struct RankPath {
  int a = 0;  // a < b
  int b = 0;
  std::string transport;  // "shm", "rdma" or "tcp"
  // For tcp: the kind of link ("cable", "lan", "routed", "loopback") and
  // each link as "local_if>remote_if" from a's side; for rdma "cable" or
  // "emulated" and each cable as "local_device>remote_device".
  std::string linkKind;
  std::vector<std::string> links;
  // Why the transport meant for the pair does not carry it (RDMA that fell
  // back to TCP); empty when it does.
  std::string note;
  // What stands by for the pair should its transport lose its last link
  // ("tcp cable tb1>tb0", "tcp lan lan0>lan0"); empty when nothing does.
  std::string standby;
};

struct Finding {
  Finding() = default;
  Finding(std::string severityText, std::string whatText, std::string whyText,
          std::string fixText, std::vector<int> hostsAbout = {},
          std::vector<std::pair<int, int>> pairsAbout = {});

  std::string severity;  // "error", "warning" or "info"
  std::string what;
  std::string why;
  std::string fix;
  // Where it is, for pictures (topo --dot): the hosts it is about, and the
  // pairs of hosts (lower first) whose cable, or missing one, it is about.
  std::vector<int> hosts;
  std::vector<std::pair<int, int>> pairs;
};

struct Cluster {
  std::string source = "detected";  // or "file <path>"
  std::vector<ClusterHost> hosts;
  std::vector<ClusterLink> links;
  std::vector<ClusterNetwork> networks;
  std::string shape;  // see classifyShape
  std::vector<RankPath> paths;
  std::vector<Finding> findings;

  int hostOfRank(int rank) const;
  // Cables between hosts i and j (either order).
  int cablesBetween(int i, int j) const;
};

// Hosts from inventories[h] (one per host, in host order) and the ranks of
// each; links and networks matched by identity: Thunderbolt cables by the
// port UUIDs both ends report, other cables by a point-to-point subnet
// (IPv4 /30 or narrower, IPv6 /126 or narrower, or a Thunderbolt interface)
// that exactly two hosts have an address in. Sets the shape. Pure.
Cluster buildCluster(const std::vector<HostInventory>& inventories,
                     const std::vector<std::vector<int>>& ranksOfHost);

// Sorts the links by host pair and numbers each pair's cables 0, 1, ... in
// an order every rank derives alike (by port number, then interface).
void renumberWires(Cluster& cluster);

// From the hosts and links alone:
//  "single"    one host;
//  "pair"      two hosts with at least one cable;
//  "ring"      every host cabled to exactly two others, one cycle (3 hosts
//              cabled in a triangle are a ring);
//  "full_mesh" four or more hosts, every pair cabled;
//  "line"      a path: two ends with one neighbour, the rest with two;
//  "star"      one host cabled to all others, which have no other cable;
//  "lan"       no cables at all, the hosts share a network;
//  "partial"   anything else (some host reached by no cable, ...).
// Doubled cables do not change the shape.
std::string classifyShape(const Cluster& cluster);

}  // namespace mcl::topology
