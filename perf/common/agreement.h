// Ranks agreeing on whether something failed: a step that may fail on some
// ranks only (a communicator that cannot be built, a cable that carries
// nothing) must be judged alike by all, or they would part ways and wait
// on each other until the timeout.
#pragma once

#include <mcl/mcl.h>

#include <string>

namespace mcl::perf {

// Collective over job: "" when every rank passes mine == "", else the
// message of the lowest failing rank (cut at a few hundred bytes).
std::string firstFailure(mclComm_t job, int rank, int nranks,
                         const std::string& mine);

}  // namespace mcl::perf
