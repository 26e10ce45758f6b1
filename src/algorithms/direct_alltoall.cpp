// All-to-all in one hop: block j of every rank's input goes straight to rank
// j, in rounds that fit the buffers between two ranks (a rank sends a round
// to all before it receives one from each). In place, the input is copied
// aside first, since received blocks overwrite it.
#include "algorithms/collectives.h"

#include <algorithm>
#include <cstddef>
#include <vector>
#include "algorithms/ring_phases.h"
#include "algorithms/step_builder.h"

namespace mcl {

void appendDirectAllToAll(const OpArgs& op, const AlgoContext& ctx,
                          std::vector<Step>& steps) {
  StepBuilder b(op, ctx, steps);
  const int n = ctx.nranks;
  const size_t count = op.count;
  const size_t eb = b.elementBytes();
  const auto block = [&](int r) { return static_cast<size_t>(r) * count; };
  const std::byte* input = b.send(0);
  if (input == b.recv(0) && n > 1) {
    const size_t bytes = static_cast<size_t>(n) * count * eb;
    ctx.call->staging.emplace_back(input, input + bytes);
    input = ctx.call->staging.back().data();
  }
  b.copy(input + block(ctx.rank) * eb, b.recv(block(ctx.rank)), count);
  const size_t round = ringRoundElements(ctx, eb);
  for (size_t start = 0; start < count; start += round) {
    const size_t len = std::min(round, count - start);
    for (int k = 1; k < n; ++k) {
      const int to = (ctx.rank + k) % n;
      b.sendTo(to, input + (block(to) + start) * eb, nullptr, len);
    }
    for (int k = 1; k < n; ++k) {
      const int from = (ctx.rank + n - k) % n;
      b.recvFrom(from, b.recv(block(from) + start), len);
    }
  }
}

}  // namespace mcl
