// `mcl-perf tune [COLLECTIVE]`: every rank joins the communicator; rank 0
// prints the tuner's link model and its predicted time of every algorithm of
// the collective at every size, marking the one it picks.
#pragma once

#include "common/options.h"
#include "common/rank_setup.h"

namespace mcl::perf {

int runTuneRank(const Options& options, const RankSetup& setup);

}  // namespace mcl::perf
