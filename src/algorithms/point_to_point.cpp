// Send and receive: one step each, streamed through the peer's connection.
#include "algorithms/collectives.h"

#include <vector>
#include "algorithms/step_builder.h"

namespace mcl {

void appendPointToPoint(const OpArgs& op, const AlgoContext& ctx,
                        std::vector<Step>& steps) {
  StepBuilder b(op, ctx, steps);
  if (op.kind == Collective::Send) {
    b.sendTo(op.root, b.send(0), nullptr, op.count);
  } else {
    b.recvFrom(op.root, b.recv(0), op.count);
  }
}

}  // namespace mcl
