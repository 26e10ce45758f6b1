// A topology file against what detection sees: each cable the file lists
// that detection does not see, and each detected cable the file leaves
// out, saying what the file says and what detection saw. The job follows
// detection unless the file is forced (MCL_TOPO_FILE_FORCE=1).
#pragma once

#include <string>
#include <vector>

#include "topology/cluster.h"

namespace mcl::topology {

// `file` and `detected` describe the same ranks (hosts grouped alike);
// hosts are matched by their ranks. Pairs where detection has no
// interface inventory for a host are not compared. `setting` names the
// file ("MCL_TOPO_FILE=/path").
std::vector<Finding> compareWithDetection(const Cluster& file,
                                          const Cluster& detected,
                                          const std::string& setting,
                                          bool forced);

}  // namespace mcl::topology
