// The cluster picture of a communicator: each host's lowest rank detects
// its inventory, the ranks all-gather them with the transport details, and
// every rank builds the same Cluster (or loads MCL_TOPO_FILE instead). Rank
// 0 logs the findings and writes MCL_TOPO_DUMP_FILE.
#pragma once

#include <string>
#include <vector>

#include "topology/cluster.h"
#include "transports/tcp/tcp_device.h"

struct mclComm;

namespace mcl {

// What this rank contributes to the all-gather: its host's inventory as
// JSON when it is the host's lowest rank and detection is on, else "".
std::string localInventory(const mclComm& comm);

// `inventories[r]` is what rank r contributed; `endpoints[r]` its TCP
// endpoints (empty when no rank uses TCP). Throws mcl::Error naming the
// file and the rank when MCL_TOPO_FILE does not fit the job.
topology::Cluster buildCommCluster(
    const mclComm& comm, const std::vector<std::string>& inventories,
    const std::vector<std::vector<transport::tcp::Endpoint>>& endpoints);

// For a cluster read from MCL_TOPO_FILE: the interfaces each TCP peer of
// this rank must be reached over (the file's cables between the two hosts,
// when it names their interfaces). Empty for a detected cluster.
std::map<int, transport::tcp::InterfaceRestriction> fileRestrictions(
    const mclComm& comm, const topology::Cluster& cluster);

// Rank 0: findings to the log (WARN for errors and warnings), the JSON to
// MCL_TOPO_DUMP_FILE. Throws mcl::Error(mclSystemError) when the dump file
// cannot be written.
void reportCluster(const mclComm& comm, const topology::Cluster& cluster);

}  // namespace mcl
