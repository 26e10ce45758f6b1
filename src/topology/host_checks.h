// The doctor for each host (beside the cabling checks): limits that will
// hold a job of this shape back. /dev/shm too small for the shared-memory
// rings of its ranks, ulimit -n too low for a few communicators, a low
// ulimit -l on a host with RDMA devices, more ranks than cores.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "topology/cluster.h"

namespace mcl::topology {

// What the transports need, from their settings (core knows them).
struct HostNeeds {
  // The bytes the shared-memory rings of n ranks of one host want.
  std::function<uint64_t(int ranks)> ringBytes;
  // Descriptors one rank of the communicator holds during init.
  int descriptorsPerRank = 0;
};

// Appends a finding per limit that binds, for hosts with an inventory
// whose limits are known.
void checkHostLimits(const Cluster& cluster, const HostNeeds& needs,
                     std::vector<Finding>& out);

}  // namespace mcl::topology
