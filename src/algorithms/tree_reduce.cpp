// Reduce up a binary tree toward the root (schedules/tree.h), in chunks: a
// rank folds its children's chunks into its own and passes the result up
// at once, so chunks stream up log2(n) levels together. The order of
// folding is fixed by the tree: results are reproducible. Ranks other than
// the root leave their output alone; one with two children folds into a
// chunk-sized scratch buffer (the steps of a lane run in order, so one
// chunk's scratch is free again before the next chunk needs it).
#include "algorithms/collectives.h"

#include <algorithm>
#include <cstddef>
#include <vector>
#include "algorithms/ring_phases.h"
#include "algorithms/schedules/tree.h"
#include "algorithms/step_builder.h"

namespace mcl {

void appendTreeReduce(const OpArgs& op, const AlgoContext& ctx,
                      std::vector<Step>& steps) {
  StepBuilder b(op, ctx, steps);
  const schedules::TreeLinks t =
      schedules::rootedTree(ctx.nranks, op.root, ctx.rank);
  const bool root = ctx.rank == op.root;
  const bool avg = op.op == mclAvg;
  const int kids = t.childCount();
  if (root && kids == 0) {
    b.copy(b.send(0), b.recv(0), op.count);
    return;
  }
  const size_t round = ringRoundElements(ctx, b.elementBytes());
  std::byte* scratch = nullptr;
  if (!root && kids == 2) {
    ctx.call->staging.emplace_back(std::min(round, op.count) *
                                   b.elementBytes());
    scratch = ctx.call->staging.back().data();
  }
  for (size_t start = 0; start < op.count; start += round) {
    const size_t len = std::min(round, op.count - start);
    const std::byte* local = b.send(start);
    std::byte* out = root ? b.recv(start) : scratch;
    const int up = root ? -1 : t.parent;
    if (kids == 0) {
      b.sendTo(t.parent, local, nullptr, len);
    } else if (kids == 1) {
      b.recvReduceOut(t.children[0], up, local, root ? out : nullptr, len,
                      root && avg);
    } else {
      b.recvReduceOut(t.children[0], -1, local, out, len, false);
      b.recvReduceOut(t.children[1], up, out, root ? out : nullptr, len,
                      root && avg);
    }
  }
}

}  // namespace mcl
