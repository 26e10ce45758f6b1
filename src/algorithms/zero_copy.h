// Zero-copy collectives among the ranks of one host (mcl.h, mclMemAlloc):
// each rank tells the others where its buffers are; when every buffer the
// call needs is mclMemAlloc memory, each rank maps its peers' and votes
// whether it could; if all could, each does its share in place
// (zero_copy_work.h), then all tell each other they are done. Otherwise
// the call runs the usual algorithm. Every decision is taken alike on
// every rank from what they exchanged.
#pragma once

#include <vector>

#include "algorithms/context.h"
#include "algorithms/op.h"
#include "algorithms/step.h"

namespace mcl {

// Appends the one step of a zero-copy attempt and returns true, when the
// call qualifies on every rank: all ranks on this host over shared memory,
// a built-in op, at least ctx.zeroCopyMinBytes, no algorithm forced.
bool appendZeroCopy(const OpArgs& op, const AlgoContext& ctx,
                    std::vector<Step>& steps);

}  // namespace mcl
