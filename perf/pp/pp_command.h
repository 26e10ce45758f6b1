// `mcl-perf pp`: the communication of pipeline-parallel decoding. Each
// rank is a stage: a token's activations (batch x hidden elements) go from
// stage to stage, and the last stage sends the sampled token ids (batch
// int32) back to the first.
#pragma once

#include "common/options.h"
#include "common/rank_setup.h"

namespace mcl::perf {

int runPpRank(const Options& options, const RankSetup& setup);

}  // namespace mcl::perf
