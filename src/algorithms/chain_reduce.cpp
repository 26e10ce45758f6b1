// Reduce along a pipelined chain root+1 -> root+2 -> ... -> root: each rank
// folds its input into the running result as pieces pass by; the order is
// fixed, so results are reproducible.
#include "algorithms/collectives.h"

#include <cstddef>
#include <vector>
#include "algorithms/schedules/ring.h"
#include "algorithms/step_builder.h"

namespace mcl {

void appendChainReduce(const OpArgs& op, const AlgoContext& ctx,
                       std::vector<Step>& steps) {
  StepBuilder b(op, ctx, steps);
  schedules::ChainLink link =
      schedules::reduceChain(ctx.nranks, op.root, ctx.rank);
  const std::byte* input = b.send(0);
  if (ctx.nranks == 1) {
    b.copy(input, b.recv(0), op.count);
  } else if (link.prev < 0) {
    b.sendTo(link.next, input, nullptr, op.count);
  } else if (link.next >= 0) {
    b.recvReduceSend(link.prev, link.next, input, op.count);
  } else {
    b.recvReduceOut(link.prev, -1, input, b.recv(0), op.count, op.op == mclAvg);
  }
}

}  // namespace mcl
