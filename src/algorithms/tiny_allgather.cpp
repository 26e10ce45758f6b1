#include "algorithms/tiny_allgather.h"

#include <cstddef>
#include <cstring>
#include <span>
#include <vector>

#include "algorithms/algorithm_table.h"
#include "algorithms/collectives.h"
#include "algorithms/kernels/types.h"
#include "algorithms/step_builder.h"
#include "algorithms/tiny_exchange.h"

namespace mcl {

bool takesTinyAllGather(const OpArgs& op, const AlgoContext& ctx) {
  if (op.kind != Collective::AllGather || !ctx.allShm || ctx.nranks < 2 ||
      op.count == 0)
    return false;
  const size_t bytes = op.count * kernels::typeSize(op.type);
  if (bytes > kTinyAllGatherBlockBytes ||
      bytes * static_cast<size_t>(ctx.nranks) >= ctx.zeroCopyMinBytes)
    return false;
  const Algorithm forced =
      ctx.forced[static_cast<size_t>(Collective::AllGather)];
  return forced == Algorithm::Auto || forced == Algorithm::Direct;
}

bool runTinyAllGather(const OpArgs& op, const AlgoContext& ctx,
                      std::vector<Step>& rest) {
  const int n = ctx.nranks;
  const size_t bytes = op.count * kernels::typeSize(op.type);
  const auto* in = static_cast<const std::byte*>(op.sendbuff);
  auto* out = static_cast<std::byte*>(op.recvbuff);
  if (!sendToEveryPeer(in, bytes, ctx)) {
    appendDirectAllGather(op, ctx, rest);
    return false;
  }
  std::byte* own = out + static_cast<size_t>(ctx.rank) * bytes;
  if (own != in) std::memcpy(own, in, bytes);
  for (int k = 1; k < n; ++k) {
    const int from = (ctx.rank + n - k) % n;
    transport::Connection* c = ctx.peers[size_t(from)];
    std::span<const std::byte> got = pollPiece(*c, bytes, ctx);
    if (got.size() < bytes) {
      // Slow peer: its block and those after it come through steps.
      StepBuilder b(op, ctx, rest);
      for (int j = k; j < n; ++j) {
        const int peer = (ctx.rank + n - j) % n;
        b.recvFrom(peer, b.recv(static_cast<size_t>(peer) * op.count),
                   op.count);
      }
      return false;
    }
    std::memcpy(out + static_cast<size_t>(from) * bytes, got.data(), bytes);
    c->releaseRecv(bytes);
  }
  return true;
}

}  // namespace mcl
