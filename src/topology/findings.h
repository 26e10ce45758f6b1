// Checking a cluster for the mistakes that cost Mac-cluster owners days:
// Thunderbolt Bridge looping broadcasts, TB4 ports offered RDMA, RDMA off,
// Thunderbolt ports without IPv4 (RDMA's GID), traffic that avoids a cable,
// and two ends that disagree on how many cables they share. Each finding
// says what, why, and the exact fix.
#pragma once

#include "topology/cluster.h"
#include "topology/host_checks.h"

namespace mcl::topology {

struct CheckOptions {
  // RDMA was asked for: its prerequisites become errors, not warnings.
  bool rdmaWanted = false;
  HostNeeds hostNeeds;  // for the hosts' limits (host_checks.h)
};

// Appends to cluster.findings (keeping any already there), errors first.
void addFindings(Cluster& cluster, const CheckOptions& options);

bool hasErrors(const Cluster& cluster);

}  // namespace mcl::topology
