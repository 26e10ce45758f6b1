// The cluster as JSON: what MCL_TOPO_DUMP_FILE writes and mclCommGetTopology
// returns, and what MCL_TOPO_FILE reads back. MCL_TOPO_FILE also takes MLX's
// files: the JACCL device matrix (MLX_IBV_DEVICES), the ring hostfile
// (MLX_HOSTFILE: one list of "ip:port" per rank) and the hostfile
// `mlx.distributed_config` writes ({"hosts": [{"ssh", "ips", "rdma"}]}).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "topology/cluster.h"

namespace mcl::topology {

constexpr int kTopologyFormatVersion = 1;

// Keys in a fixed, readable order (version, source, shape, hosts, ...).
nlohmann::ordered_json clusterToJson(const Cluster& cluster);

// Any of the formats above; the shape is recomputed (a stated shape that the
// links contradict is an error), links are renumbered into wires, findings
// are not read. Throws mcl::Error(mclInvalidArgument) naming the place of
// the first defect. `path` only labels messages.
Cluster clusterFromText(std::string_view text, const std::string& path);

}  // namespace mcl::topology
