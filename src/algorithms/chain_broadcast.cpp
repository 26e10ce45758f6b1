// Broadcast down a pipelined chain root -> root+1 -> ... : every rank starts
// forwarding a piece as soon as it arrives.
#include "algorithms/collectives.h"

#include <cstddef>
#include <vector>
#include "algorithms/schedules/ring.h"
#include "algorithms/step_builder.h"

namespace mcl {

void appendChainBroadcast(const OpArgs& op, const AlgoContext& ctx,
                          std::vector<Step>& steps) {
  StepBuilder b(op, ctx, steps);
  schedules::ChainLink link =
      schedules::broadcastChain(ctx.nranks, op.root, ctx.rank);
  if (ctx.rank == op.root) {
    const std::byte* src = b.send(0);
    std::byte* dst = b.recv(0);
    if (link.next < 0) {
      b.copy(src, dst, op.count);
    } else {
      b.sendTo(link.next, src, src == dst ? nullptr : dst, op.count);
    }
  } else if (link.next >= 0) {
    b.forward(link.prev, link.next, b.recv(0), op.count);
  } else {
    b.recvFrom(link.prev, b.recv(0), op.count);
  }
}

}  // namespace mcl
