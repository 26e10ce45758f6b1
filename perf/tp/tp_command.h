// `mcl-perf tp`: the communication of tensor-parallel decoding. Token
// after token, each layer's all-reduces run back to back, in place on that
// layer's buffer of batch x hidden elements, as a model issues them.
#pragma once

#include "common/options.h"
#include "common/rank_setup.h"

namespace mcl::perf {

int runTpRank(const Options& options, const RankSetup& setup);

}  // namespace mcl::perf
