// All-gather as a ring: each rank's block travels n-1 hops, in rounds small
// enough for the rings.
#include "algorithms/collectives.h"

#include <algorithm>
#include <cstddef>
#include <vector>
#include "algorithms/ring_phases.h"

namespace mcl {

void appendRingAllGather(const OpArgs& op, const AlgoContext& ctx,
                         std::vector<Step>& steps) {
  StepBuilder b(op, ctx, steps);
  const size_t count = op.count;
  const size_t ownOffset = static_cast<size_t>(ctx.rank) * count;
  const bool inPlace = b.send(0) == b.recv(ownOffset);
  if (ctx.nranks == 1) {
    b.copy(b.send(0), b.recv(ownOffset), count);
    return;
  }
  const size_t round = ringRoundElements(ctx, b.elementBytes());
  for (size_t start = 0; start < count; start += round) {
    BlockLayout layout;
    layout.base = start;
    layout.stride = count;
    layout.blockCount = std::min(round, count - start);
    layout.nranks = ctx.nranks;
    layout.even = false;
    b.sendTo(schedules::ringNext(ctx.nranks, ctx.rank), b.send(start),
             inPlace ? nullptr : b.recv(ownOffset + start), layout.blockCount);
    appendRingAllGatherRest(b, ctx, layout);
  }
}

}  // namespace mcl
