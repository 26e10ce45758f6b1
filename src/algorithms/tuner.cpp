#include "algorithms/tuner.h"

#include <algorithm>

#include "algorithms/kernels/types.h"

namespace mcl {

namespace {

// Where the direct all-reduce replaces the ring: a buffer of at most this
// many bytes, among at most this many ranks (each sends to all others).
constexpr size_t kDirectMaxBytes = 4096;
constexpr int kDirectMaxRanks = 8;

}  // namespace

Algorithm tunedAlgorithm(Collective collective, const OpArgs& op,
                         const AlgoContext& ctx) {
  switch (collective) {
    case Collective::AllReduce:
      // Each rank of the direct all-reduce sends its whole buffer before
      // receiving: it must fit in the buffers between two ranks.
      if (ctx.nranks > 1 && ctx.nranks <= kDirectMaxRanks &&
          op.count * kernels::typeSize(op.type) <=
              std::min(kDirectMaxBytes, ctx.maxStepBytes))
        return Algorithm::Direct;
      return Algorithm::Ring;
    case Collective::AllGather:
    case Collective::ReduceScatter:
      return Algorithm::Ring;
    case Collective::Broadcast:
    case Collective::Reduce:
      return Algorithm::Chain;
  }
  return Algorithm::Ring;
}

}  // namespace mcl
