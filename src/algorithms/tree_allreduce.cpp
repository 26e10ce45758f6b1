// All-reduce over a double binary tree (schedules/tree.h): the first half of
// the buffer is reduced up tree 0 and broadcast back down it, the second
// half likewise over tree 1, whose inner nodes are tree 0's leaves. Both
// go in chunks that fit the buffers between two ranks, and the broadcast of
// chunk c starts `lag` chunks after its reduction, so chunks stream up and
// down at once. Every rank appends the same sequence of (chunk, tree,
// direction), and within one of them data only flows one way along tree
// edges: no rank ever waits on one that waits on it. Each element is
// reduced at one place in a fixed order and then copied: results are
// bitwise identical on every rank and run.
#include "algorithms/collectives.h"

#include <algorithm>
#include <cstddef>
#include <vector>
#include "algorithms/ring_phases.h"
#include "algorithms/schedules/ring.h"
#include "algorithms/schedules/tree.h"
#include "algorithms/step_builder.h"

namespace mcl {

namespace {

struct TreeHalf {
  schedules::TreeLinks links;
  schedules::Block span;  // in elements
};

// Chunk c of one tree's half, in elements; count 0 past its end.
schedules::Block chunkOf(const TreeHalf& half, size_t chunk, size_t c) {
  size_t begin = std::min(half.span.count, c * chunk);
  return {half.span.offset + begin, std::min(chunk, half.span.count - begin)};
}

void appendUp(StepBuilder& b, const TreeHalf& half, schedules::Block ch,
              bool avg) {
  const schedules::TreeLinks& t = half.links;
  const std::byte* local = b.send(ch.offset);
  std::byte* out = b.recv(ch.offset);
  const bool root = t.parent < 0;
  const int up = root ? -1 : t.parent;
  switch (t.childCount()) {
    case 0:
      b.sendTo(t.parent, local, nullptr, ch.count);
      break;
    case 1:
      b.recvReduceOut(t.children[0], up, local, out, ch.count, root && avg);
      break;
    default:
      b.recvReduceOut(t.children[0], -1, local, out, ch.count, false);
      b.recvReduceOut(t.children[1], up, out, out, ch.count, root && avg);
  }
}

void appendDown(StepBuilder& b, const TreeHalf& half, schedules::Block ch) {
  const schedules::TreeLinks& t = half.links;
  std::byte* out = b.recv(ch.offset);
  int first = t.children[0];
  int second = t.children[1];
  if (t.parent < 0) {
    for (int child : {first, second})
      if (child >= 0) b.sendTo(child, out, nullptr, ch.count);
  } else if (first >= 0) {
    b.forward(t.parent, first, out, ch.count);
    if (second >= 0) b.sendTo(second, out, nullptr, ch.count);
  } else {
    b.recvFrom(t.parent, out, ch.count);
  }
}

}  // namespace

void appendTreeAllReduce(const OpArgs& op, const AlgoContext& ctx,
                         std::vector<Step>& steps) {
  StepBuilder b(op, ctx, steps);
  const int n = ctx.nranks;
  if (n == 1) {
    b.copy(b.send(0), b.recv(0), op.count);
    return;
  }
  TreeHalf halves[2];
  for (int t = 0; t < 2; ++t) {
    halves[t].links = schedules::doubleTree(n, t, ctx.rank);
    halves[t].span = schedules::evenBlock(op.count, 2, t);
  }
  const size_t chunk = ringRoundElements(ctx, b.elementBytes());
  const size_t chunks = (halves[0].span.count + chunk - 1) / chunk;
  const size_t lag = static_cast<size_t>(schedules::treeDepth(n));
  const bool avg = op.op == mclAvg;
  for (size_t i = 0; i < chunks + lag; ++i) {
    if (i < chunks)
      for (const TreeHalf& h : halves)
        appendUp(b, h, chunkOf(h, chunk, i), avg);
    if (i >= lag)
      for (const TreeHalf& h : halves)
        appendDown(b, h, chunkOf(h, chunk, i - lag));
  }
}

}  // namespace mcl
