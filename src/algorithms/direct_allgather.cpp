// All-gather in one hop: every rank sends its block straight to every other,
// in rounds that fit the buffers between two ranks (a rank sends a round to
// all before it receives one from each).
#include "algorithms/collectives.h"

#include <algorithm>
#include <cstddef>
#include <vector>
#include "algorithms/ring_phases.h"
#include "algorithms/step_builder.h"

namespace mcl {

void appendDirectAllGather(const OpArgs& op, const AlgoContext& ctx,
                           std::vector<Step>& steps) {
  StepBuilder b(op, ctx, steps);
  const int n = ctx.nranks;
  const size_t count = op.count;
  const size_t own = static_cast<size_t>(ctx.rank) * count;
  b.copy(b.send(0), b.recv(own), count);  // nothing when in place
  const size_t round = ringRoundElements(ctx, b.elementBytes());
  for (size_t start = 0; start < count; start += round) {
    const size_t len = std::min(round, count - start);
    for (int k = 1; k < n; ++k)
      b.sendTo((ctx.rank + k) % n, b.send(start), nullptr, len);
    for (int k = 1; k < n; ++k) {
      const int from = (ctx.rank + n - k) % n;
      b.recvFrom(from, b.recv(static_cast<size_t>(from) * count + start), len);
    }
  }
}

}  // namespace mcl
