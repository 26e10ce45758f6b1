// Which RDMA devices carry the wires to each peer on real hardware: a wire
// is a Thunderbolt cable of the cluster picture, whose interface enX carries
// the device rdma_enX at both ends. Both ends list a pair's cables in the
// cluster's order, so the k-th wire is the same cable on both sides however
// each Mac orders its ports.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "topology/cluster.h"
#include "transports/rdma/rdma_wires.h"

namespace mcl::transport::rdma {

// The wires from `rank` to each of `peers` (ranks on other hosts). Throws
// mclInvalidUsage, naming `label`, the peer and the interfaces, for a pair
// without a cable or with a Thunderbolt 4 cable.
std::map<int, WirePlan> rdmaWirePlan(const topology::Cluster& cluster, int rank,
                                     const std::vector<int>& peers,
                                     const std::string& label);

}  // namespace mcl::transport::rdma
