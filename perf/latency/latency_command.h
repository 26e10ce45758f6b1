// mcl-perf latency: round trips between every pair of ranks over each
// transport that reaches the pair (shared memory, TCP, RDMA), measured in
// turn in the same processes so they can be compared side by side.
#pragma once

#include "common/options.h"
#include "common/rank_setup.h"

namespace mcl::perf {

// One rank of the run; rank 0 prints the table and writes -J/--csv.
// Returns kExitOk, or kExitFailure when a report cannot be written or no
// transport could be measured.
int runLatencyRank(const Options& options, const RankSetup& setup);

}  // namespace mcl::perf
