// All-reduce by recursive halving then recursive doubling, for any number
// of ranks (schedules/halving_doubling.h): ranks beyond the largest power
// of two fold their input into a partner first and get the result back at
// the end. Each exchange goes in rounds that fit the buffers between two
// ranks: both partners send a round before receiving one. Every element is
// reduced on one rank in a fixed order and then copied: results are
// bitwise identical on every rank and run.
#include "algorithms/collectives.h"

#include <algorithm>
#include <cstddef>
#include <vector>
#include "algorithms/ring_phases.h"
#include "algorithms/schedules/halving_doubling.h"
#include "algorithms/schedules/ring.h"
#include "algorithms/step_builder.h"

namespace mcl {

namespace {

// Blocks [lo, hi) of p even blocks of `count`, in elements.
schedules::Block blockRange(size_t count, int p, int lo, int hi) {
  schedules::Block first = schedules::evenBlock(count, p, lo);
  schedules::Block last = schedules::evenBlock(count, p, hi - 1);
  return {first.offset, last.offset + last.count - first.offset};
}

// Sends `give` from `src` and receives `take` from the same peer, in rounds;
// reduce: the received elements are folded with `src` into out, else copied
// into out.
void exchange(StepBuilder& b, size_t round, int peer, const std::byte* src,
              std::byte* out, schedules::Block give, schedules::Block take,
              bool reduce, bool divide) {
  const size_t eb = b.elementBytes();
  const size_t most = std::max(give.count, take.count);
  for (size_t at = 0; at < most; at += round) {
    size_t g = give.count > at ? std::min(round, give.count - at) : 0;
    size_t t = take.count > at ? std::min(round, take.count - at) : 0;
    b.sendTo(peer, src + (give.offset + at) * eb, nullptr, g);
    std::byte* into = out + (take.offset + at) * eb;
    if (reduce) {
      b.recvReduceOut(peer, -1, src + (take.offset + at) * eb, into, t, divide);
    } else {
      b.recvFrom(peer, into, t);
    }
  }
}

// The last halving exchange and the first doubling exchange fused, round
// by round: each round of `take` is folded and at once sent back, while it
// is still in the caches (two passes over buffers larger than the caches
// cost a tenth more, measured with two ranks on shared memory). Each round
// then waits for the partner twice: where ranks share cores that is a
// context switch more per round (4 ranks on 2 cores, fused: 1.5x slower at
// 128-256 KiB, 4-8 % from 1 to 4 MiB), so crowded machines keep the two
// exchanges apart.
void exchangeAtSeam(StepBuilder& b, size_t round, int peer,
                    const std::byte* src, std::byte* out, schedules::Block give,
                    schedules::Block take, bool divide) {
  const size_t eb = b.elementBytes();
  const size_t most = std::max(give.count, take.count);
  for (size_t at = 0; at < most; at += round) {
    size_t g = give.count > at ? std::min(round, give.count - at) : 0;
    size_t t = take.count > at ? std::min(round, take.count - at) : 0;
    std::byte* folded = out + (take.offset + at) * eb;
    b.sendTo(peer, src + (give.offset + at) * eb, nullptr, g);
    b.recvReduceOut(peer, -1, src + (take.offset + at) * eb, folded, t, divide);
    b.sendTo(peer, folded, nullptr, t);
    b.recvFrom(peer, out + (give.offset + at) * eb, g);
  }
}

}  // namespace

void appendHalvingDoublingAllReduce(const OpArgs& op, const AlgoContext& ctx,
                                    std::vector<Step>& steps) {
  StepBuilder b(op, ctx, steps);
  const int n = ctx.nranks;
  const size_t count = op.count;
  std::byte* out = b.recv(0);
  if (n == 1) {
    b.copy(b.send(0), out, count);
    return;
  }
  const schedules::HalvingDoublingRole role =
      schedules::halvingDoublingRole(n, ctx.rank);
  if (role.index < 0) {
    // Folded: hand the input over, get the result back.
    b.sendTo(role.foldPartner, b.send(0), nullptr, count);
    b.recvFrom(role.foldPartner, out, count);
    return;
  }
  const std::byte* src = b.send(0);
  if (role.foldPartner >= 0) {
    b.recvReduceOut(role.foldPartner, -1, src, out, count, false);
    src = out;  // partial sums live in the output from here on
  }
  const size_t round = ringRoundElements(ctx, b.elementBytes());
  const int p = role.activeCount;
  const std::vector<schedules::HalvingStep> halving =
      schedules::halvingSteps(n, ctx.rank);
  for (size_t k = 0; k + 1 < halving.size(); ++k) {
    const schedules::HalvingStep& s = halving[k];
    exchange(b, round, s.peer, src, out,
             blockRange(count, p, s.sendLo, s.sendHi),
             blockRange(count, p, s.keepLo, s.keepHi), true, false);
    src = out;
  }
  const schedules::HalvingStep& seam = halving.back();
  const schedules::Block give = blockRange(count, p, seam.sendLo, seam.sendHi);
  const schedules::Block keep = blockRange(count, p, seam.keepLo, seam.keepHi);
  if (!ctx.link.crowded && count * b.elementBytes() > ctx.link.cacheBytes) {
    exchangeAtSeam(b, round, seam.peer, src, out, give, keep, op.op == mclAvg);
  } else {
    exchange(b, round, seam.peer, src, out, give, keep, true, op.op == mclAvg);
    exchange(b, round, seam.peer, out, out, keep, give, false, false);
  }
  for (size_t k = halving.size() - 1; k-- > 0;) {
    const schedules::HalvingStep& s = halving[k];
    exchange(b, round, s.peer, out, out,
             blockRange(count, p, s.keepLo, s.keepHi),
             blockRange(count, p, s.sendLo, s.sendHi), false, false);
  }
  if (role.foldPartner >= 0) b.sendTo(role.foldPartner, out, nullptr, count);
}

}  // namespace mcl
