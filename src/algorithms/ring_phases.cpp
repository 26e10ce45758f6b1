#include "algorithms/ring_phases.h"

#include <cstddef>

namespace mcl {

using schedules::Block;

RingView forwardRing(const AlgoContext& ctx) {
  const int n = ctx.nranks;
  return {n, ctx.rank, schedules::ringNext(n, ctx.rank),
          schedules::ringPrev(n, ctx.rank)};
}

RingView backwardRing(const AlgoContext& ctx) {
  const int n = ctx.nranks;
  return {n, schedules::wrap(n, n - ctx.rank), schedules::ringPrev(n, ctx.rank),
          schedules::ringNext(n, ctx.rank)};
}

size_t ringRoundElements(const AlgoContext& ctx, size_t elementBytes) {
  size_t elements = ctx.maxStepBytes / elementBytes;
  return elements > 0 ? elements : 1;
}

void appendReduceScatterFirst(StepBuilder& b, const RingView& ring,
                              const BlockLayout& layout) {
  Block first =
      layout(schedules::ringReduceScatterStep(ring.nranks, ring.position, 0)
                 .sendBlock);
  b.sendTo(ring.next, b.send(first.offset), nullptr, first.count);
}

void appendReduceScatterStep(StepBuilder& b, const RingView& ring,
                             const BlockLayout& layout, int step,
                             std::byte* out, bool sendOn, bool divide) {
  // What arrives at step s is what this rank sends at step s+1.
  Block blk =
      layout(schedules::ringReduceScatterStep(ring.nranks, ring.position, step)
                 .recvBlock);
  if (step < ring.nranks - 2) {
    b.recvReduceSend(ring.prev, ring.next, b.send(blk.offset), blk.count);
  } else {
    b.recvReduceOut(ring.prev, sendOn ? ring.next : -1, b.send(blk.offset), out,
                    blk.count, divide);
  }
}

void appendAllGatherStep(StepBuilder& b, const RingView& ring,
                         const BlockLayout& layout, int step) {
  Block blk = layout(
      schedules::ringAllGatherStep(ring.nranks, ring.position, step).recvBlock);
  if (step < ring.nranks - 2) {
    b.forward(ring.prev, ring.next, b.recv(blk.offset), blk.count);
  } else {
    b.recvFrom(ring.prev, b.recv(blk.offset), blk.count);
  }
}

void appendRingReduceScatter(StepBuilder& b, const AlgoContext& ctx,
                             const BlockLayout& layout, std::byte* out,
                             bool sendOn, bool divide) {
  const RingView ring = forwardRing(ctx);
  appendReduceScatterFirst(b, ring, layout);
  for (int s = 0; s < ctx.nranks - 1; ++s)
    appendReduceScatterStep(b, ring, layout, s, out, sendOn, divide);
}

void appendRingAllGatherRest(StepBuilder& b, const AlgoContext& ctx,
                             const BlockLayout& layout) {
  const RingView ring = forwardRing(ctx);
  for (int s = 0; s < ctx.nranks - 1; ++s)
    appendAllGatherStep(b, ring, layout, s);
}

}  // namespace mcl
