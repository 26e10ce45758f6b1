// Reduce-scatter in one hop: every rank sends block j of its input straight
// to rank j, which folds its own block first and then the others' in rank
// order: a fixed order, so results are reproducible. In rounds that fit the
// buffers between two ranks.
#include "algorithms/collectives.h"

#include <algorithm>
#include <cstddef>
#include <vector>
#include "algorithms/ring_phases.h"
#include "algorithms/step_builder.h"

namespace mcl {

void appendDirectReduceScatter(const OpArgs& op, const AlgoContext& ctx,
                               std::vector<Step>& steps) {
  StepBuilder b(op, ctx, steps);
  const int n = ctx.nranks;
  const size_t count = op.count;
  const size_t own = static_cast<size_t>(ctx.rank) * count;
  const bool avg = op.op == mclAvg;
  const size_t round = ringRoundElements(ctx, b.elementBytes());
  for (size_t start = 0; start < count; start += round) {
    const size_t len = std::min(round, count - start);
    for (int k = 1; k < n; ++k) {
      const int to = (ctx.rank + k) % n;
      b.sendTo(to, b.send(static_cast<size_t>(to) * count + start), nullptr,
               len);
    }
    // In place the output is our own input block: copying it is a no-op.
    std::byte* out = b.recv(start);
    b.copy(b.send(own + start), out, len);
    int folded = 1;
    for (int from = 0; from < n; ++from) {
      if (from == ctx.rank) continue;
      ++folded;
      b.recvReduceOut(from, -1, out, out, len, avg && folded == n);
    }
  }
}

}  // namespace mcl
