#include "algorithms/collectives.h"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "algorithms/algorithm_table.h"
#include "algorithms/kernels/scale.h"
#include "algorithms/kernels/types.h"
#include "algorithms/tiny_allgather.h"
#include "algorithms/tiny_allreduce.h"
#include "algorithms/tuner.h"
#include "algorithms/zero_copy.h"
#include "base/error.h"

namespace mcl {

Algorithm chosenAlgorithm(const OpArgs& op, const AlgoContext& ctx) {
  const Collective collective = op.kind;
  if (!hasAlgorithms(collective)) return Algorithm::Auto;
  Algorithm forced = ctx.forced[static_cast<size_t>(collective)];
  if (forced != Algorithm::Auto) return forced;
  if (takesTinyAllReduce(op, ctx) || takesTinyAllGather(op, ctx))
    return Algorithm::Direct;
  return tunedAlgorithm(collective, op, ctx);
}

namespace {

// A PreMulSum: this rank's input is scaled into a staging buffer as the
// operation starts (a scalar read through its pointer has the value of this
// moment), and then summed like any input.
void appendPreMultiplied(const OpArgs& op, const AlgoContext& ctx,
                         std::vector<Step>& steps) {
  const size_t elements = op.kind == Collective::ReduceScatter
                              ? op.count * static_cast<size_t>(ctx.nranks)
                              : op.count;
  const std::byte* scalar =
      op.preMultiply.pointer != nullptr
          ? static_cast<const std::byte*>(op.preMultiply.pointer)
          : op.preMultiply.value.data();
  ctx.call->staging.emplace_back(elements * kernels::typeSize(op.type));
  kernels::scale(ctx.call->staging.back().data(), op.sendbuff, elements,
                 op.type, scalar);
  OpArgs plain = op;
  plain.preMultiply = {};
  plain.sendbuff = ctx.call->staging.back().data();
  plain.ringsOnly = true;  // the staged input is not mclMemAlloc memory
  appendSteps(plain, ctx, steps);
}

}  // namespace

void appendSteps(const OpArgs& op, const AlgoContext& ctx,
                 std::vector<Step>& steps) {
  if (op.preMultiply.active) return appendPreMultiplied(op, ctx, steps);
  const Collective collective = op.kind;
  if (hasAlgorithms(collective)) {
    if (appendZeroCopy(op, ctx, steps)) return;
    const AlgorithmInfo* a =
        findAlgorithm(collective, chosenAlgorithm(op, ctx));
    if (a == nullptr)
      throw error(mclInternalError, "%s has no algorithm %s",
                  collectiveName(collective),
                  algorithmName(chosenAlgorithm(op, ctx)));
    return a->append(op, ctx, steps);
  }
  if (isPointToPoint(op.kind)) return appendPointToPoint(op, ctx, steps);
  // Barrier: a one-byte all-reduce: no rank leaves before every rank
  // arrived.
  OpArgs token;
  token.kind = Collective::AllReduce;
  token.sendbuff = &ctx.call->barrierBytes[0];
  token.recvbuff = &ctx.call->barrierBytes[1];
  token.count = 1;
  token.type = mclUint8;
  token.op = mclMax;
  appendRingAllReduce(token, ctx, steps);
}

}  // namespace mcl
