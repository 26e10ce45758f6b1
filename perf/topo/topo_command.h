// `mcl-perf topo`: every rank joins the communicator; rank 0 asks mcl for
// the cluster it detected and prints it (text, DOT, JSON, findings).
#pragma once

#include "common/options.h"
#include "common/rank_setup.h"

namespace mcl::perf {

// kExitOk, or kExitFailure when --check found an error-level finding or a
// file cannot be written.
int runTopoRank(const Options& options, const RankSetup& setup);

}  // namespace mcl::perf
