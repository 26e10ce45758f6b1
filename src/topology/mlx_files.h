// MLX's own cluster files, read as an mcl cluster so MLX users can point
// MCL_TOPO_FILE at what they already have. One rank per Mac in all three.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "topology/cluster.h"

namespace mcl::topology {

// The JACCL device matrix, the ring hostfile (MLX_HOSTFILE) or the
// `mlx.distributed_config` hostfile, recognised by their structure; nullopt
// when `top` is none of them. Throws mcl::Error(mclInvalidArgument) for a
// recognised file with a defect.
std::optional<Cluster> clusterFromMlxJson(const nlohmann::json& top,
                                          std::string_view text,
                                          const std::string& path);

}  // namespace mcl::topology
