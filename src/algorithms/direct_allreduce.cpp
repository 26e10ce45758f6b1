// All-reduce of small buffers in one exchange: every rank sends its whole
// input to every other and folds all inputs in rank order, 0 first. One
// network latency instead of the ring's 2(n-1), and every rank computes the
// same sums in the same order: results are bitwise identical everywhere.
#include <cstring>

#include "algorithms/collectives.h"
#include "algorithms/step_builder.h"

namespace mcl {

void appendDirectAllReduce(const OpArgs& op, AlgoContext& ctx,
                           std::vector<Step>& steps) {
  StepBuilder b(op, ctx, steps);
  const size_t bytes = op.count * b.elementBytes();
  const std::byte* input = b.send(0);
  std::byte* out = b.recv(0);
  if (input == out) {
    // In place: the output fills up before our own input is folded in.
    ctx.staging.emplace_back(input, input + bytes);
    input = ctx.staging.back().data();
  }
  const int n = ctx.nranks;
  for (int peer = 0; peer < n; ++peer)
    if (peer != ctx.rank) b.sendTo(peer, input, nullptr, op.count);
  const bool avg = op.op == mclAvg;
  for (int r = 0; r < n; ++r) {
    const bool last = r == n - 1;
    if (r == 0) {
      if (r == ctx.rank) {
        b.copy(input, out, op.count);
      } else {
        b.recvFrom(r, out, op.count);
      }
    } else if (r == ctx.rank) {
      b.reduceLocal(input, out, op.count, avg && last);
    } else {
      b.recvReduceOut(r, -1, out, out, op.count, avg && last);
    }
  }
}

}  // namespace mcl
