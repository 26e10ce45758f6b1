// Joining the communicator a run measures: forked locally (rank, nranks and
// the unique id given) or as one rank of a launcher's job.
#pragma once

#include <mcl/mcl.h>

#include "options.h"
#include "rank_runner.h"

namespace mcl::perf {

// Applies --transport and -T; fills setup->rank and setup->nranks when the
// job comes from the environment. An mcl error ends the process
// (dieOnMclError).
mclComm_t joinCommunicator(const Options& options, RankSetup* setup);

}  // namespace mcl::perf
