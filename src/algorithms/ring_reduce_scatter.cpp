// Reduce-scatter as a ring: block i of every rank's input ends, reduced, in
// rank i's output; in rounds small enough for the rings.
#include "algorithms/collectives.h"

#include <algorithm>
#include <cstddef>
#include <vector>
#include "algorithms/ring_phases.h"

namespace mcl {

void appendRingReduceScatter(const OpArgs& op, const AlgoContext& ctx,
                             std::vector<Step>& steps) {
  StepBuilder b(op, ctx, steps);
  if (ctx.nranks == 1) {
    b.copy(b.send(0), b.recv(0), op.count);
    return;
  }
  const size_t round = ringRoundElements(ctx, b.elementBytes());
  for (size_t start = 0; start < op.count; start += round) {
    BlockLayout layout;
    layout.base = start;
    layout.stride = op.count;
    layout.blockCount = std::min(round, op.count - start);
    layout.nranks = ctx.nranks;
    layout.even = false;
    appendRingReduceScatter(b, ctx, layout, b.recv(start), false,
                            op.op == mclAvg);
  }
}

}  // namespace mcl
