// Broadcast down a binary tree rooted at the root (schedules/tree.h), in
// chunks: a rank forwards each chunk to its children as soon as it has it,
// so chunks stream down log2(n) levels at once.
#include "algorithms/collectives.h"

#include <algorithm>
#include <cstddef>
#include <vector>
#include "algorithms/ring_phases.h"
#include "algorithms/schedules/tree.h"
#include "algorithms/step_builder.h"

namespace mcl {

void appendTreeBroadcast(const OpArgs& op, const AlgoContext& ctx,
                         std::vector<Step>& steps) {
  StepBuilder b(op, ctx, steps);
  const schedules::TreeLinks t =
      schedules::rootedTree(ctx.nranks, op.root, ctx.rank);
  const int first = t.children[0];
  const int second = t.children[1];
  if (ctx.rank == op.root && first < 0) {
    b.copy(b.send(0), b.recv(0), op.count);
    return;
  }
  const size_t round = ringRoundElements(ctx, b.elementBytes());
  for (size_t start = 0; start < op.count; start += round) {
    const size_t len = std::min(round, op.count - start);
    std::byte* out = b.recv(start);
    if (ctx.rank == op.root) {
      const std::byte* src = b.send(start);
      b.sendTo(first, src, src == out ? nullptr : out, len);
      if (second >= 0) b.sendTo(second, src, nullptr, len);
    } else if (first >= 0) {
      b.forward(t.parent, first, out, len);
      if (second >= 0) b.sendTo(second, out, nullptr, len);
    } else {
      b.recvFrom(t.parent, out, len);
    }
  }
}

}  // namespace mcl
