// All-reduce in one exchange: every rank sends its whole input to every
// other and folds all inputs in rank order, 0 first. One network latency
// instead of the ring's 2(n-1), and every rank computes the same sums in
// the same order: results are bitwise identical everywhere. Larger buffers
// go in rounds that fit the buffers between two ranks (each rank sends a
// round to all before it receives).
#include "algorithms/collectives.h"

#include <algorithm>
#include <cstddef>
#include <vector>
#include "algorithms/ring_phases.h"
#include "algorithms/step_builder.h"

namespace mcl {

void appendDirectAllReduce(const OpArgs& op, const AlgoContext& ctx,
                           std::vector<Step>& steps) {
  StepBuilder b(op, ctx, steps);
  const size_t bytes = op.count * b.elementBytes();
  const std::byte* input = b.send(0);
  std::byte* out = b.recv(0);
  if (input == out && ctx.nranks > 1) {
    // In place: the output fills up before our own input is folded in.
    ctx.call->staging.emplace_back(input, input + bytes);
    input = ctx.call->staging.back().data();
  }
  const int n = ctx.nranks;
  const bool avg = op.op == mclAvg;
  const size_t round = ringRoundElements(ctx, b.elementBytes());
  const size_t eb = b.elementBytes();
  for (size_t start = 0; start < op.count; start += round) {
    const size_t len = std::min(round, op.count - start);
    const std::byte* in = input + start * eb;
    std::byte* o = out + start * eb;
    for (int k = 1; k < n; ++k) b.sendTo((ctx.rank + k) % n, in, nullptr, len);
    appendDirectFold(b, ctx, 0, in, o, len, avg);
  }
}

void appendDirectFold(StepBuilder& b, const AlgoContext& ctx, int first,
                      const std::byte* in, std::byte* out, size_t elements,
                      bool avg) {
  const int n = ctx.nranks;
  for (int r = first; r < n; ++r) {
    const bool last = r == n - 1;
    if (r == 0) {
      if (r == ctx.rank) {
        b.copy(in, out, elements);
      } else {
        b.recvFrom(r, out, elements);
      }
    } else if (r == ctx.rank) {
      // The same operand order as a peer's input below (x_r op sum): max
      // and min keep the first of equal operands (+0 and -0), so every
      // rank must fold alike to get the same bits.
      b.reduceLocal(in, out, elements, avg && last, true);
    } else {
      b.recvReduceOut(r, -1, out, out, elements, avg && last);
    }
  }
}

}  // namespace mcl
