// The tuner: which algorithm a collective uses when MCL_ALGO leaves the
// choice to it. The same inputs on every rank give the same answer.
#pragma once

#include "algorithms/algorithm.h"
#include "algorithms/context.h"
#include "algorithms/op.h"

namespace mcl {

Algorithm tunedAlgorithm(Collective collective, const OpArgs& op,
                         const AlgoContext& ctx);

}  // namespace mcl
