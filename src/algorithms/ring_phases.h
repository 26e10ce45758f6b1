// The two halves every ring algorithm is made of, fused into streaming steps:
// a reduce-scatter that leaves each rank its reduced block, and an all-gather
// that circulates the blocks. A ring runs forward (rank r sends to r+1) or
// backward (to r-1); the step functions let an algorithm interleave two
// rings, one each way, so that both directions of every link carry data.
#pragma once

#include <algorithm>
#include <cstddef>

#include "algorithms/schedules/ring.h"
#include "algorithms/step_builder.h"

namespace mcl {

// Where block i of one round lies, in elements. Either `total` elements
// from `base` split evenly over the ranks (all-reduce), or `blockCount`
// elements at base + i * stride (all-gather and reduce-scatter, whose blocks
// are whole per-rank buffers).
struct BlockLayout {
  size_t base = 0;
  size_t total = 0;
  size_t stride = 0;
  size_t blockCount = 0;
  int nranks = 1;
  bool even = true;
  schedules::Block operator()(int index) const {
    if (!even) return {base + static_cast<size_t>(index) * stride, blockCount};
    schedules::Block b = schedules::evenBlock(total, nranks, index);
    return {base + b.offset, b.count};
  }
};

// This rank's place in a ring: its position (the schedule's rank) and the
// ranks it sends to and receives from. Backward, rank r sits at position
// (n - r) mod n, so position p + 1 is rank r - 1.
struct RingView {
  int nranks = 1;
  int position = 0;
  int next = 0;
  int prev = 0;
};

RingView forwardRing(const AlgoContext& ctx);
RingView backwardRing(const AlgoContext& ctx);

// Elements one block may carry per round. A ring is a cycle of bounded
// buffers: a step sends a whole block before the next step receives, so a
// block must fit in half a ring or the ranks would all wait for room.
size_t ringRoundElements(const AlgoContext& ctx, size_t elementBytes);

// Reduce-scatter over the ring, step by step: first the send of the block
// the schedule starts with, then steps 0 .. n-2. The last leaves this
// position's block, fully reduced, in `out` (and, when sendOn, also sends
// it on as the first all-gather step). Inputs come from the op's sendbuff.
void appendReduceScatterFirst(StepBuilder& b, const RingView& ring,
                              const BlockLayout& layout);
void appendReduceScatterStep(StepBuilder& b, const RingView& ring,
                             const BlockLayout& layout, int step,
                             std::byte* out, bool sendOn, bool divide);

// All-gather step 0 .. n-2 after this rank's own block was sent: receives
// a block into recvbuff, forwarding all but the last.
void appendAllGatherStep(StepBuilder& b, const RingView& ring,
                         const BlockLayout& layout, int step);

// The whole of each, forward.
void appendRingReduceScatter(StepBuilder& b, const AlgoContext& ctx,
                             const BlockLayout& layout, std::byte* out,
                             bool sendOn, bool divide);
void appendRingAllGatherRest(StepBuilder& b, const AlgoContext& ctx,
                             const BlockLayout& layout);

}  // namespace mcl
