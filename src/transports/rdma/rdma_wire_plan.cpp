#include "transports/rdma/rdma_wire_plan.h"

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "base/error.h"

namespace mcl::transport::rdma {

namespace {

// The device on `interface`: the one the host's inventory ties to it (a
// RoCE NIC on Linux, "mlx5_0" on eth1), else Apple's name, rdma_<interface>.
std::string deviceOn(const topology::Cluster& cluster,
                     const topology::LinkEnd& end) {
  const topology::ClusterHost& host = cluster.hosts[size_t(end.host)];
  for (const topology::RdmaDevice& d : host.inventory.rdmaDevices)
    if (d.netdev == end.interface) return d.name;
  return "rdma_" + end.interface;
}

}  // namespace

std::map<int, WirePlan> rdmaWirePlan(const topology::Cluster& cluster, int rank,
                                     const std::vector<int>& peers,
                                     const std::string& label) {
  std::map<int, WirePlan> plan;
  int me = cluster.hostOfRank(rank);
  for (int peer : peers) {
    int there = cluster.hostOfRank(peer);
    WirePlan& wires = plan[peer];
    for (const topology::ClusterLink& l : cluster.links) {
      bool forward = l.a.host == me && l.b.host == there;
      bool backward = l.b.host == me && l.a.host == there;
      if (!forward && !backward) continue;
      if (l.a.interface.empty() || l.b.interface.empty()) continue;
      if (l.generation == 4)
        throw error(mclInvalidUsage,
                    "%s: the cable %s<->%s to rank %d runs at Thunderbolt 4; "
                    "RDMA needs Thunderbolt 5 ports and cables at both ends "
                    "(use MCL_TRANSPORT=tcp on this cable)",
                    label.c_str(), l.a.interface.c_str(), l.b.interface.c_str(),
                    peer);
      const topology::LinkEnd& mine = forward ? l.a : l.b;
      const topology::LinkEnd& theirs = forward ? l.b : l.a;
      wires.push_back({deviceOn(cluster, mine), deviceOn(cluster, theirs)});
    }
    if (wires.empty())
      throw error(mclInvalidUsage,
                  "%s: MCL_TRANSPORT=rdma, but no Thunderbolt cable joins this "
                  "host to rank %d's (see `mcl-perf topo`); RDMA needs a "
                  "direct cable",
                  label.c_str(), peer);
  }
  return plan;
}

}  // namespace mcl::transport::rdma
