// All-reduce as a ring: reduce-scatter then all-gather, the two phases fused
// at the seam (the step that completes a block also sends it on), in rounds
// small enough for the rings. Each element is reduced in ring order starting
// after its block's owner, the same order on every run: results are bitwise
// reproducible.
#include "algorithms/collectives.h"
#include "algorithms/ring_phases.h"

namespace mcl {

void appendRingAllReduce(const OpArgs& op, AlgoContext& ctx,
                         std::vector<Step>& steps) {
  StepBuilder b(op, ctx, steps);
  if (ctx.nranks == 1) {
    b.copy(b.send(0), b.recv(0), op.count);  // avg over one rank is a copy
    return;
  }
  const size_t round = ringRoundElements(ctx, b.elementBytes()) *
                       static_cast<size_t>(ctx.nranks);
  for (size_t start = 0; start < op.count; start += round) {
    BlockLayout layout;
    layout.base = start;
    layout.total = std::min(round, op.count - start);
    layout.nranks = ctx.nranks;
    schedules::Block own = layout(ctx.rank);
    appendRingReduceScatter(b, ctx, layout, b.recv(own.offset), true,
                            op.op == mclAvg);
    appendRingAllGatherRest(b, ctx, layout);
  }
}

}  // namespace mcl
