#include "algorithms/collectives.h"

#include <algorithm>

#include "algorithms/kernels/types.h"

namespace mcl {

const char* opKindName(OpKind kind) {
  switch (kind) {
    case OpKind::AllReduce:
      return "all-reduce";
    case OpKind::AllGather:
      return "all-gather";
    case OpKind::Broadcast:
      return "broadcast";
    case OpKind::Reduce:
      return "reduce";
    case OpKind::ReduceScatter:
      return "reduce-scatter";
    case OpKind::Barrier:
      return "barrier";
    case OpKind::Send:
      return "send";
    case OpKind::Recv:
      return "recv";
  }
  return "operation";
}

void appendSteps(const OpArgs& op, AlgoContext& ctx, std::vector<Step>& steps) {
  switch (op.kind) {
    case OpKind::AllReduce:
      // Small buffers: one exchange beats the ring's 2(n-1) hops (until the
      // tuner chooses per link).
      // Each rank sends its whole buffer before receiving: it must fit in
      // the buffers between two ranks, as a ring step must.
      if (ctx.nranks > 1 && ctx.nranks <= kDirectMaxRanks &&
          op.count * kernels::typeSize(op.type) <=
              std::min(kDirectMaxBytes, ctx.maxStepBytes))
        return appendDirectAllReduce(op, ctx, steps);
      return appendRingAllReduce(op, ctx, steps);
    case OpKind::AllGather:
      return appendRingAllGather(op, ctx, steps);
    case OpKind::Broadcast:
      return appendChainBroadcast(op, ctx, steps);
    case OpKind::Reduce:
      return appendChainReduce(op, ctx, steps);
    case OpKind::ReduceScatter:
      return appendRingReduceScatter(op, ctx, steps);
    case OpKind::Send:
    case OpKind::Recv:
      return appendPointToPoint(op, ctx, steps);
    case OpKind::Barrier: {
      // A one-byte all-reduce: no rank leaves before every rank arrived.
      OpArgs token;
      token.kind = OpKind::AllReduce;
      token.sendbuff = &ctx.scratch[0];
      token.recvbuff = &ctx.scratch[1];
      token.count = 1;
      token.type = mclUint8;
      token.op = mclMax;
      return appendRingAllReduce(token, ctx, steps);
    }
  }
}

}  // namespace mcl
