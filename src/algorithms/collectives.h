// Turns an operation into the steps this rank runs, with the algorithm
// MCL_ALGO forces or the tuner picks (algorithm_table.h lists them).
#pragma once

#include <cstddef>
#include <vector>

#include "algorithms/algorithm.h"
#include "algorithms/context.h"
#include "algorithms/op.h"
#include "algorithms/step.h"

namespace mcl {

void appendSteps(const OpArgs& op, const AlgoContext& ctx,
                 std::vector<Step>& steps);

// The algorithm appendSteps uses for `op` (Auto for barrier and
// point-to-point, which have no choice). The same on every rank.
Algorithm chosenAlgorithm(const OpArgs& op, const AlgoContext& ctx);

void appendRingAllReduce(const OpArgs& op, const AlgoContext& ctx,
                         std::vector<Step>& steps);
void appendDirectAllReduce(const OpArgs& op, const AlgoContext& ctx,
                           std::vector<Step>& steps);
class StepBuilder;
// The direct all-reduce's fold, from rank `first` on: out = x_r op out in
// rank order (rank 0's input copied or received first), in this rank's
// own input; avg divides after the last. Ranks before `first` are folded
// into out already.
void appendDirectFold(StepBuilder& b, const AlgoContext& ctx, int first,
                      const std::byte* in, std::byte* out, size_t elements,
                      bool avg);
void appendTreeAllReduce(const OpArgs& op, const AlgoContext& ctx,
                         std::vector<Step>& steps);
void appendHalvingDoublingAllReduce(const OpArgs& op, const AlgoContext& ctx,
                                    std::vector<Step>& steps);
void appendDirectAllGather(const OpArgs& op, const AlgoContext& ctx,
                           std::vector<Step>& steps);
void appendDirectReduceScatter(const OpArgs& op, const AlgoContext& ctx,
                               std::vector<Step>& steps);
void appendDirectAllToAll(const OpArgs& op, const AlgoContext& ctx,
                          std::vector<Step>& steps);
void appendTreeBroadcast(const OpArgs& op, const AlgoContext& ctx,
                         std::vector<Step>& steps);
void appendTreeReduce(const OpArgs& op, const AlgoContext& ctx,
                      std::vector<Step>& steps);
void appendRingAllGather(const OpArgs& op, const AlgoContext& ctx,
                         std::vector<Step>& steps);
void appendRingReduceScatter(const OpArgs& op, const AlgoContext& ctx,
                             std::vector<Step>& steps);
void appendChainBroadcast(const OpArgs& op, const AlgoContext& ctx,
                          std::vector<Step>& steps);
void appendChainReduce(const OpArgs& op, const AlgoContext& ctx,
                       std::vector<Step>& steps);
void appendPointToPoint(const OpArgs& op, const AlgoContext& ctx,
                        std::vector<Step>& steps);

}  // namespace mcl
