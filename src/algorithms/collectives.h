// Turns an operation into the steps this rank runs. Ring and chain
// algorithms for now; the tuner will choose among more.
#pragma once

#include <vector>

#include "algorithms/context.h"
#include "algorithms/op.h"
#include "algorithms/step.h"

namespace mcl {

void appendSteps(const OpArgs& op, AlgoContext& ctx, std::vector<Step>& steps);

// Where the direct all-reduce replaces the ring: a buffer of at most this
// many bytes, among at most this many ranks (each sends to all others).
constexpr size_t kDirectMaxBytes = 4096;
constexpr int kDirectMaxRanks = 8;

void appendRingAllReduce(const OpArgs& op, AlgoContext& ctx,
                         std::vector<Step>& steps);
void appendDirectAllReduce(const OpArgs& op, AlgoContext& ctx,
                           std::vector<Step>& steps);
void appendRingAllGather(const OpArgs& op, AlgoContext& ctx,
                         std::vector<Step>& steps);
void appendRingReduceScatter(const OpArgs& op, AlgoContext& ctx,
                             std::vector<Step>& steps);
void appendChainBroadcast(const OpArgs& op, AlgoContext& ctx,
                          std::vector<Step>& steps);
void appendChainReduce(const OpArgs& op, AlgoContext& ctx,
                       std::vector<Step>& steps);
void appendPointToPoint(const OpArgs& op, AlgoContext& ctx,
                        std::vector<Step>& steps);

}  // namespace mcl
