// One rank of a benchmark: joins the communicator, measures every size of
// every type, op and root the options ask for, checks the results, and
// (on rank 0) prints the table and writes the JSON report.
#pragma once

#include <mcl/mcl.h>

#include "options.h"

namespace mcl::perf {

struct RankSetup {
  int rank = 0;
  int nranks = 1;
  mclUniqueId id{};
  // Join through mclCommInitFromEnv (a launcher's job); rank and nranks
  // then come from the communicator.
  bool fromEnvironment = false;
};

// Returns kExitOk, kExitWrongData when some check found wrong elements
// (on any rank), or kExitFailure when the JSON report cannot be written.
// An mcl call that fails ends the process (dieOnMclError).
int runRank(const Options& options, const RankSetup& setup);

}  // namespace mcl::perf
