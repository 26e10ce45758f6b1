#include "algorithms/step_builder.h"

#include <cstddef>
#include <vector>

#include "algorithms/kernels/types.h"

namespace mcl {

namespace {
// Operations this large (bytes per rank) copy their results past the
// caches. Measured with 2 ranks on shm, against plain copies, 3 runs each
// way: all-reduce 16 MiB out of place 12-29% faster, 64 MiB 12-23%;
// all-gather 16 MiB out of place about 15%.
constexpr size_t kStreamOutBytes = size_t{4} << 20;
}  // namespace

StepBuilder::StepBuilder(const OpArgs& op, const AlgoContext& ctx,
                         std::vector<Step>& steps)
    : op_(op),
      ctx_(ctx),
      steps_(steps),
      elementBytes_(kernels::typeSize(op.type)) {
  prototype_.type = op.type;
  prototype_.streamOut = op.count * elementBytes_ >= kStreamOutBytes;
  prototype_.op = op.op;
  prototype_.divisor = ctx.nranks;
}

const std::byte* StepBuilder::send(size_t elementOffset) const {
  return static_cast<const std::byte*>(op_.sendbuff) +
         elementOffset * elementBytes_;
}

std::byte* StepBuilder::recv(size_t elementOffset) const {
  return static_cast<std::byte*>(op_.recvbuff) + elementOffset * elementBytes_;
}

transport::Connection* StepBuilder::connection(int peer) const {
  const auto& table = isPointToPoint(op_.kind) ? ctx_.p2pPeers : ctx_.peers;
  return table[static_cast<size_t>(peer)];
}

Step& StepBuilder::add(size_t elements) {
  Step& s = steps_.emplace_back(prototype_);
  s.bytes = elements * elementBytes_;
  return s;
}

void StepBuilder::copy(const std::byte* from, std::byte* to, size_t elements) {
  if (elements == 0 || from == to) return;
  Step& s = add(elements);
  s.local = from;
  s.out = to;
}

void StepBuilder::sendTo(int peer, const std::byte* from, std::byte* alsoTo,
                         size_t elements) {
  if (elements == 0) return;
  Step& s = add(elements);
  s.sendTo = connection(peer);
  s.sendPeer = peer;
  s.local = from;
  s.out = alsoTo;
}

void StepBuilder::recvFrom(int peer, std::byte* to, size_t elements) {
  if (elements == 0) return;
  Step& s = add(elements);
  s.recvFrom = connection(peer);
  s.recvPeer = peer;
  s.out = to;
}

void StepBuilder::forward(int from, int to, std::byte* alsoTo,
                          size_t elements) {
  if (elements == 0) return;
  Step& s = add(elements);
  s.recvFrom = connection(from);
  s.recvPeer = from;
  s.sendTo = connection(to);
  s.sendPeer = to;
  s.out = alsoTo;
}

void StepBuilder::reduceLocal(const std::byte* local, std::byte* out,
                              size_t elements, bool divide, bool localFirst) {
  if (elements == 0) return;
  Step& s = add(elements);
  s.local = local;
  s.out = out;
  s.reduce = true;
  s.divide = divide;
  s.localFirst = localFirst;
}

void StepBuilder::recvReduceSend(int from, int to, const std::byte* local,
                                 size_t elements) {
  recvReduceOut(from, to, local, nullptr, elements, false);
}

void StepBuilder::recvReduceOut(int from, int to, const std::byte* local,
                                std::byte* out, size_t elements, bool divide) {
  if (elements == 0) return;
  Step& s = add(elements);
  s.recvFrom = connection(from);
  s.recvPeer = from;
  if (to >= 0) {
    s.sendTo = connection(to);
    s.sendPeer = to;
  }
  s.local = local;
  s.out = out;
  s.reduce = true;
  s.divide = divide;
}

}  // namespace mcl
