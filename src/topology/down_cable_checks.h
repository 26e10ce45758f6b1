// The doctor for cables that are down: both ends of a cable's
// point-to-point subnet sit on hosts of the job, and one end is switched
// off or either has no link (a cable pulled out, a port off). Detection
// cannot see such a cable as a link, so without this check the only trace
// was an info about a port "with a cable's address but no link".
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "topology/cluster.h"

namespace mcl::topology {

// Adds a finding per cable that is down, naming both ends (a warning where
// the two hosts keep another cable, an error where it was their only
// one), and puts each end it names in `named` (host, interface), so that
// other checks leave them alone.
void checkDownCables(const Cluster& cluster, std::vector<Finding>& out,
                     std::set<std::pair<int, std::string>>& named);

}  // namespace mcl::topology
