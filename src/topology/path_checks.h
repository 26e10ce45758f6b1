// The doctor for the paths the job's data takes: two hosts that have a
// cable (or one the addresses suggest) whose traffic goes over a LAN or a
// routed path instead, and data over Wi-Fi. Each finding names the pair,
// the path taken and the cable it could have used.
#pragma once

#include <string>
#include <vector>

#include "topology/cluster.h"

namespace mcl::topology {

void checkPaths(const Cluster& cluster, std::vector<Finding>& out);

// "lan lan0>lan0" for the first path between hosts a and b that leaves
// the cables, or "" when every path between them takes a cable (or they
// share none).
std::string slowPathBetween(const Cluster& cluster, int hostA, int hostB);

}  // namespace mcl::topology
