// `mcl-perf plan`: measures the cluster this job runs on (or reads a saved
// one with --from) and prints the layouts a model can run in, best first
// (perf/plan/layouts.h makes the prediction; docs/planning.md explains it).
#pragma once

#include "common/options.h"
#include "common/rank_setup.h"

namespace mcl::perf {

// One rank of a job that measures: rank 0 prints.
int runPlanRank(const Options& options, const RankSetup& setup);

// --from FILE: no ranks, no measurement.
int runPlanFromFile(const Options& options);

}  // namespace mcl::perf
