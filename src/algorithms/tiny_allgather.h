// The all-gather of small blocks among the ranks of one host, run without
// building steps, as the tiny all-reduce is (tiny_allreduce.h): every rank
// sends its block to every other, then copies each peer's block out as it
// arrives. It sends exactly what the direct all-gather sends, so a peer
// that is slow to answer hands the rest to that algorithm's steps, which
// wait as every call waits (spin, yield, sleep; timeout; abort).
#pragma once

#include <cstddef>
#include <vector>

#include "algorithms/context.h"
#include "algorithms/op.h"
#include "algorithms/step.h"

namespace mcl {

// Blocks (one rank's input) at most this large take the path.
constexpr size_t kTinyAllGatherBlockBytes = 1024;

// True when op takes the path on this communicator: the same answer on
// every rank (it depends only on the call and the communicator).
bool takesTinyAllGather(const OpArgs& op, const AlgoContext& ctx);

// Runs op (takesTinyAllGather is true). Returns true when it is complete;
// false when the remaining work is in `rest`, to be run as steps.
bool runTinyAllGather(const OpArgs& op, const AlgoContext& ctx,
                      std::vector<Step>& rest);

}  // namespace mcl
