// All-reduce as a ring: reduce-scatter then all-gather, the two phases fused
// at the seam (the step that completes a block also sends it on), in rounds
// small enough for the rings. With three ranks or more, each round is cut
// in two and the halves travel two rings, one each way, step by step in
// turn: both directions of every link carry data, as full-duplex cables
// (Thunderbolt, Ethernet) allow. (With two ranks one ring already uses
// both directions.) Each element is reduced in ring order starting after
// its block's owner, the same order on every run: results are bitwise
// reproducible.
#include "algorithms/collectives.h"

#include <algorithm>
#include <cstddef>
#include <vector>
#include "algorithms/ring_phases.h"

namespace mcl {

namespace {

struct Half {
  RingView ring;
  BlockLayout layout;
};

}  // namespace

void appendRingAllReduce(const OpArgs& op, const AlgoContext& ctx,
                         std::vector<Step>& steps) {
  StepBuilder b(op, ctx, steps);
  const int n = ctx.nranks;
  if (n == 1) {
    b.copy(b.send(0), b.recv(0), op.count);  // avg over one rank is a copy
    return;
  }
  const size_t perRing =
      ringRoundElements(ctx, b.elementBytes()) * static_cast<size_t>(n);
  const int rings = n == 2 ? 1 : 2;
  const size_t round = perRing * static_cast<size_t>(rings);
  const bool avg = op.op == mclAvg;
  for (size_t start = 0; start < op.count; start += round) {
    const size_t total = std::min(round, op.count - start);
    std::vector<Half> halves;
    for (int k = 0; k < rings; ++k) {
      Half h;
      h.ring = k == 0 ? forwardRing(ctx) : backwardRing(ctx);
      schedules::Block part = schedules::evenBlock(total, rings, k);
      h.layout.base = start + part.offset;
      h.layout.total = part.count;
      h.layout.nranks = n;
      halves.push_back(h);
    }
    for (const Half& h : halves) appendReduceScatterFirst(b, h.ring, h.layout);
    for (int s = 0; s < n - 1; ++s)
      for (const Half& h : halves) {
        schedules::Block own = h.layout(h.ring.position);
        appendReduceScatterStep(b, h.ring, h.layout, s, b.recv(own.offset),
                                true, avg);
      }
    for (int s = 0; s < n - 1; ++s)
      for (const Half& h : halves) appendAllGatherStep(b, h.ring, h.layout, s);
  }
}

}  // namespace mcl
