#include "algorithms/ring_phases.h"

namespace mcl {

using schedules::Block;

size_t ringRoundElements(const AlgoContext& ctx, size_t elementBytes) {
  size_t elements = ctx.maxStepBytes / elementBytes;
  return elements > 0 ? elements : 1;
}

void appendRingReduceScatter(StepBuilder& b, const AlgoContext& ctx,
                             const BlockLayout& layout, std::byte* out,
                             bool sendOn, bool divide) {
  const int n = ctx.nranks;
  const int r = ctx.rank;
  const int next = schedules::ringNext(n, r);
  const int prev = schedules::ringPrev(n, r);
  Block first = layout(schedules::ringReduceScatterStep(n, r, 0).sendBlock);
  b.sendTo(next, b.send(first.offset), nullptr, first.count);
  for (int s = 0; s < n - 1; ++s) {
    // What arrives at step s is what this rank sends at step s+1.
    Block blk = layout(schedules::ringReduceScatterStep(n, r, s).recvBlock);
    if (s < n - 2) {
      b.recvReduceSend(prev, next, b.send(blk.offset), blk.count);
    } else {
      b.recvReduceOut(prev, sendOn ? next : -1, b.send(blk.offset), out,
                      blk.count, divide);
    }
  }
}

void appendRingAllGatherRest(StepBuilder& b, const AlgoContext& ctx,
                             const BlockLayout& layout) {
  const int n = ctx.nranks;
  const int r = ctx.rank;
  const int next = schedules::ringNext(n, r);
  const int prev = schedules::ringPrev(n, r);
  for (int s = 0; s < n - 1; ++s) {
    Block blk = layout(schedules::ringAllGatherStep(n, r, s).recvBlock);
    if (s < n - 2) {
      b.forward(prev, next, b.recv(blk.offset), blk.count);
    } else {
      b.recvFrom(prev, b.recv(blk.offset), blk.count);
    }
  }
}

}  // namespace mcl
