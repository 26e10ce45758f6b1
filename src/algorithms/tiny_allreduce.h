// The all-reduce of a few bytes among the ranks of one host, run without
// building steps: the call's cost is then mostly the hop itself, which is
// what a training loop's scalar all-reduces (loss, norms, flags) wait on.
// It sends and folds exactly as the direct all-reduce does (every rank sends
// its input to every other; folds in rank order), so results and messages
// are the same; a peer that is slow to answer hands the rest to steps,
// which wait as every call waits (spin, yield, sleep; timeout; abort).
#pragma once

#include <cstddef>
#include <vector>

#include "algorithms/context.h"
#include "algorithms/op.h"
#include "algorithms/step.h"

namespace mcl {

// Calls at most this large take the path.
constexpr size_t kTinyAllReduceBytes = 256;

// True when op takes the path on this communicator: the same answer on
// every rank (it depends only on the call and the communicator).
bool takesTinyAllReduce(const OpArgs& op, const AlgoContext& ctx);

// Runs op (takesTinyAllReduce is true). Returns true when it is complete;
// false when the remaining work is in `rest`, to be run as steps.
bool runTinyAllReduce(const OpArgs& op, const AlgoContext& ctx,
                      std::vector<Step>& rest);

}  // namespace mcl
