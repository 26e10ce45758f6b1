#include "algorithms/tiny_allreduce.h"

#include <cstddef>
#include <cstring>
#include <span>
#include <vector>

#include "algorithms/algorithm_table.h"
#include "algorithms/collectives.h"
#include "algorithms/kernels/reduce.h"
#include "algorithms/kernels/types.h"
#include "algorithms/step_builder.h"
#include "algorithms/tiny_exchange.h"

namespace mcl {

bool takesTinyAllReduce(const OpArgs& op, const AlgoContext& ctx) {
  if (op.kind != Collective::AllReduce || !ctx.allShm || ctx.nranks < 2 ||
      op.preMultiply.active || op.op >= mclNumOps || op.count == 0)
    return false;
  const size_t bytes = op.count * kernels::typeSize(op.type);
  if (bytes > kTinyAllReduceBytes || bytes >= ctx.zeroCopyMinBytes)
    return false;
  const Algorithm forced =
      ctx.forced[static_cast<size_t>(Collective::AllReduce)];
  return forced == Algorithm::Auto || forced == Algorithm::Direct;
}

bool runTinyAllReduce(const OpArgs& op, const AlgoContext& ctx,
                      std::vector<Step>& rest) {
  const int n = ctx.nranks;
  const size_t count = op.count;
  const size_t bytes = count * kernels::typeSize(op.type);
  const auto* in = static_cast<const std::byte*>(op.sendbuff);
  auto* out = static_cast<std::byte*>(op.recvbuff);
  if (!sendToEveryPeer(in, bytes, ctx)) {
    appendDirectAllReduce(op, ctx, rest);
    return false;
  }
  alignas(64) std::byte sum[kTinyAllReduceBytes];
  for (int r = 0; r < n; ++r) {
    const std::byte* x = in;
    transport::Connection* c = nullptr;
    if (r != ctx.rank) {
      c = ctx.peers[size_t(r)];
      std::span<const std::byte> got = pollPiece(*c, bytes, ctx);
      if (got.size() < bytes) {
        // Slow peer: what is folded goes to `out`, the rest to steps. In
        // place, our input is kept first if it is still to be folded.
        if (in == out && r < ctx.rank) {
          ctx.call->staging.emplace_back(in, in + bytes);
          in = ctx.call->staging.back().data();
        }
        if (r > 0) std::memcpy(out, sum, bytes);
        StepBuilder b(op, ctx, rest);
        appendDirectFold(b, ctx, r, in, out, count, op.op == mclAvg);
        return false;
      }
      x = got.data();
    }
    // sum = x_r op sum, as the direct all-reduce folds.
    if (r == 0)
      std::memcpy(sum, x, bytes);
    else
      kernels::reduce(sum, x, sum, count, op.type, op.op);
    if (c != nullptr) c->releaseRecv(bytes);
  }
  if (op.op == mclAvg) kernels::divide(sum, count, op.type, n);
  std::memcpy(out, sum, bytes);
  return true;
}

}  // namespace mcl
