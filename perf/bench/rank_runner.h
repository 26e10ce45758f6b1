// One rank of a benchmark: joins the communicator, measures every size of
// every type, op and root the options ask for, checks the results, and
// (on rank 0) prints the table and writes the JSON report.
#pragma once

#include <mcl/mcl.h>

#include "common/options.h"
#include "common/rank_setup.h"

namespace mcl::perf {

// Returns kExitOk, kExitWrongData when some check found wrong elements
// (on any rank), or kExitFailure when the JSON report cannot be written.
// An mcl call that fails ends the process (dieOnMclError).
int runRank(const Options& options, const RankSetup& setup);

}  // namespace mcl::perf
