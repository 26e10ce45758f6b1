// The two halves every ring algorithm is made of, fused into streaming steps:
// a reduce-scatter that leaves each rank its reduced block, and an all-gather
// that circulates the blocks.
#pragma once

#include <algorithm>

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

// Elements one block may carry per round. A ring is a cycle of bounded
// buffers: a step sends a whole block before the next step receives, so a
// block must fit in half a ring or the ranks would all wait for room.
size_t ringRoundElements(const AlgoContext& ctx, size_t elementBytes);

// Reduce-scatter over the ring: the rank's own block, fully reduced, lands
// in `out` (and, when sendOn, also goes on to the next rank as the first
// all-gather step). The inputs come from the op's sendbuff.
void appendRingReduceScatter(StepBuilder& b, const AlgoContext& ctx,
                             const BlockLayout& layout, std::byte* out,
                             bool sendOn, bool divide);

// All-gather over the ring, after the rank's own block was sent: receives
// every other block into recvbuff, forwarding all but the last.
void appendRingAllGatherRest(StepBuilder& b, const AlgoContext& ctx,
                             const BlockLayout& layout);

}  // namespace mcl
