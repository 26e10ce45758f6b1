// The doctor for addresses, the mistakes made when cables are given IPs:
// a cable's point-to-point address with nothing at the far end (a Mac
// never configured, or configured in another subnet), several interfaces
// of a host in one subnet (a doubled cable in one /24), Thunderbolt links
// sharing a subnet with others, MTUs that differ across a cable, and RDMA
// devices on interfaces without IPv4 (no GID).
#pragma once

#include <string>
#include <vector>

#include "topology/cluster.h"

namespace mcl::topology {

// A cable the addresses suggest but detection could not confirm: one end
// with a point-to-point address and nothing answering in its subnet, and a
// port on another host that is up with a link and no address (or an
// address in another point-to-point subnet).
struct SuspectedCable {
  int hostA = -1;
  std::string interfaceA;  // has the point-to-point address
  int hostB = -1;
  std::string interfaceB;
};

std::vector<SuspectedCable> suspectedCables(const Cluster& cluster);

// rdmaWanted: a missing GID is an error, not a warning.
void checkAddresses(const Cluster& cluster, bool rdmaWanted,
                    std::vector<Finding>& out);

}  // namespace mcl::topology
