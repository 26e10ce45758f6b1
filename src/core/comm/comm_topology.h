// The cluster picture of a communicator: each host's lowest rank detects
// its inventory, the ranks all-gather them with the transport details, and
// every rank builds the same Cluster (or loads MCL_TOPO_FILE instead), with
// each pair's path as the transport choice made it. Rank 0 logs the
// findings and writes MCL_TOPO_DUMP_FILE.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "platform/socket.h"
#include "topology/cluster.h"

struct mclComm;

namespace mcl {

// What this rank contributes to the all-gather: its host's inventory as
// JSON when it is the host's lowest rank and detection is on, else "".
// Outside tools give up in time for the rest of init to meet `deadline`.
std::string localInventory(const mclComm& comm, platform::Deadline deadline);

// MCL_TOPO_FILE as this rank read it, before the all-gather: each rank
// reads its own disk, so the ranks compare what they read.
struct TopologyFileRead {
  // "" (no file), "digest <hex>" or "error <message>": what the rank sends.
  std::string status;
  std::optional<topology::Cluster> cluster;
};
TopologyFileRead readTopologyFile(const mclComm& comm);

// `fileStatus[r]`, `inventories[r]`: what rank r contributed. Every rank
// throws the same mcl::Error, naming the rank and the file, when some rank
// could not read MCL_TOPO_FILE, the ranks read different files, or the
// file does not fit the job.
topology::Cluster buildCommCluster(const mclComm& comm,
                                   const TopologyFileRead& file,
                                   const std::vector<std::string>& fileStatus,
                                   const std::vector<std::string>& inventories);

// Once each pair's transport is chosen (comm.transports): the path of every
// pair as its transport describes it, and the findings (RDMA's
// prerequisites are errors where RDMA joins some pair).
void addPathsAndFindings(const mclComm& comm, topology::Cluster& cluster);
// Once connected: this rank's own pairs described again, by the links
// their connections use.
void refreshOwnPaths(const mclComm& comm, topology::Cluster& cluster);

// About how many descriptors one rank of a communicator of nranks holds
// while init runs (tcp: it reaches some peer over TCP), for messages and
// the hosts' checks.
int initDescriptorsPerRank(int nranks, bool tcp);

// Rank 0: findings to the log (WARN for errors and warnings), the JSON to
// MCL_TOPO_DUMP_FILE. Throws mcl::Error(mclSystemError) when the dump file
// cannot be written.
void reportCluster(const mclComm& comm, const topology::Cluster& cluster);

}  // namespace mcl
