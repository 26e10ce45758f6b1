#include "algorithms/step.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <span>

#include "algorithms/kernels/reduce.h"
#include "algorithms/kernels/stream_copy.h"
#include "algorithms/kernels/types.h"
#include "base/error.h"

namespace mcl {
namespace {

using Clock = std::chrono::steady_clock;

// A fold that streams into the ring is made here first, a block at a
// time: small enough to stay in L1, a multiple of every element size.
constexpr size_t kFoldBlock = 8 * 1024;

// Makes bytes [at, at + n) of the piece into `made`: the fold of the
// peer's piece and local (or, without a peer's piece, of out and local,
// in the order asked for: max/min keep the first of equal operands), or
// the piece passed on; divided when asked.
void makePiece(const Step& s, std::byte* made, const std::byte* source,
               std::span<const std::byte> in, const std::byte* local,
               const std::byte* out, size_t at, size_t n, size_t elementBytes) {
  if (s.reduce) {
    const std::byte* first = in.empty() ? out : in.data();
    const std::byte* second = local;
    if (in.empty() && s.localFirst) std::swap(first, second);
    kernels::reduce(made, first + at, second + at, n / elementBytes, s.type,
                    s.op);
  } else if (made != source + at) {
    memcpy(made, source + at, n);
  }
  if (s.divide) kernels::divide(made, n / elementBytes, s.type, s.divisor);
}

void copyOut(const Step& s, std::byte* out, const std::byte* from, size_t n) {
  if (out == nullptr || out == from) return;
  if (s.streamOut)
    kernels::streamCopy(out, from, n);
  else
    memcpy(out, from, n);
}

// Produces one piece into the outgoing slot, and into `out` too when
// asked. The transport may ask for non-temporal stores (shm: when the
// peer's core is far, see shm/store_choice.h): a fold is then made in an
// L1 block first, and `out` is filled from cache, never read back from the
// slot the stores sent to memory.
void writeSlot(Step& s, std::byte* slot, const std::byte* source,
               std::span<const std::byte> in, const std::byte* local,
               std::byte* out, size_t len, size_t elementBytes) {
  const bool fold = s.reduce || s.divide;
  const bool chosen = s.sendTo->choosesSlotStores(len);
  const bool stream = chosen && s.sendTo->streamNextSlot(fold);
  const Clock::time_point start = chosen ? Clock::now() : Clock::time_point();
  if (!stream) {
    makePiece(s, slot, source, in, local, out, 0, len, elementBytes);
    copyOut(s, out, slot, len);
  } else if (fold) {
    alignas(64) thread_local std::byte block[kFoldBlock];
    for (size_t at = 0; at < len; at += kFoldBlock) {
      const size_t n = std::min(kFoldBlock, len - at);
      makePiece(s, block, source, in, local, out, at, n, elementBytes);
      kernels::streamCopy(slot + at, block, n);
      copyOut(s, out ? out + at : nullptr, block, n);
    }
  } else {
    kernels::streamCopy(slot, source, len);
    copyOut(s, out, source, len);
  }
  if (chosen)
    s.sendTo->recordSlotStore(
        fold, stream, len,
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() -
                                                             start));
}

[[noreturn]] void throwSplitElement(const Step& s, size_t len,
                                    size_t elementBytes) {
  throw error(mclInternalError,
              "%s #%llu: a piece of %zu bytes splits a %zu-byte element "
              "(a transport broke the whole-element rule)",
              collectiveProse(s.kind),
              static_cast<unsigned long long>(s.sequence), len, elementBytes);
}

// A fold whose result lands in the caller's `out` and also goes on to a
// peer over a network transport (the seam of a ring all-reduce, a tree's
// way up): made in `out` and sent from there, since the kernel copies it
// anyway, instead of made in a slot and copied to `out` (one pass over
// the result fewer: 5% of a 2-rank 1 MiB TCP all-reduce's cycles). Sound
// because nothing writes those bytes of `out` again before they leave:
// later steps of an all-reduce write only other blocks, or final values
// that cannot arrive before this rank's share of them left, and the call
// returns only once every send is flushed.
bool foldsIntoOutAndSends(const Step& s) {
  return s.sendTo != nullptr && s.recvFrom != nullptr && s.out != nullptr &&
         s.local != nullptr && s.reduce && s.sendTo->sendsFromCallerMemory();
}

bool foldInOutAndSend(Step& s, size_t elementBytes) {
  bool moved = false;
  while (s.done < s.bytes) {
    std::span<const std::byte> in = s.recvFrom->peekRecv();
    if (in.empty()) break;
    // A free slot to send from first: the fold is made once, not again
    // when the send has to wait.
    const std::span<std::byte> room =
        s.sendTo->acquireSend(std::min(s.bytes - s.done, in.size()));
    if (room.empty()) break;
    const size_t len = room.size();
    if (len % elementBytes != 0) throwSplitElement(s, len, elementBytes);
    std::byte* out = s.out + s.done;
    kernels::reduce(out, in.data(), s.local + s.done, len / elementBytes,
                    s.type, s.op);
    if (s.divide) kernels::divide(out, len / elementBytes, s.type, s.divisor);
    if (s.sendTo->sendFrom(out, len) != len)
      throw error(mclInternalError,
                  "%s #%llu: a connection took less than the %zu bytes it "
                  "had room for",
                  collectiveProse(s.kind),
                  static_cast<unsigned long long>(s.sequence), len);
    s.recvFrom->releaseRecv(len);
    s.done += len;
    moved = true;
  }
  return moved;
}

}  // namespace

bool progressStep(Step& s) {
  if (s.task != nullptr) {
    const bool moved = s.task->progress(s);
    if (s.task->finished()) s.done = s.bytes;
    return moved;
  }
  bool moved = false;
  const size_t elementBytes = kernels::typeSize(s.type);
  // A plain send over a network transport goes out from the caller's buffer:
  // the kernel copies it anyway, a copy into a slot first is wasted.
  if (s.sendTo != nullptr && s.recvFrom == nullptr && !s.reduce && !s.divide &&
      s.local != nullptr && s.sendTo->sendsFromCallerMemory()) {
    while (s.done < s.bytes) {
      size_t n = s.sendTo->sendFrom(s.local + s.done, s.bytes - s.done);
      if (n == 0) break;
      if (s.out != nullptr && s.out != s.local)
        memcpy(s.out + s.done, s.local + s.done, n);
      s.done += n;
      moved = true;
    }
    return moved;
  }
  if (foldsIntoOutAndSends(s)) return foldInOutAndSend(s, elementBytes);
  while (s.done < s.bytes) {
    size_t len = s.bytes - s.done;
    std::span<const std::byte> in;
    if (s.recvFrom != nullptr) {
      in = s.recvFrom->peekRecv();
      if (in.empty()) break;
      len = std::min(len, in.size());
    }
    std::span<std::byte> slot;
    if (s.sendTo != nullptr) {
      slot = s.sendTo->acquireSend(len);
      if (slot.empty()) break;
      len = std::min(len, slot.size());
    }
    if ((s.reduce || s.divide) && len % elementBytes != 0)
      throwSplitElement(s, len, elementBytes);
    const std::byte* local = s.local ? s.local + s.done : nullptr;
    std::byte* out = s.out ? s.out + s.done : nullptr;
    const std::byte* source = in.empty() ? local : in.data();
    if (s.sendTo != nullptr) {
      writeSlot(s, slot.data(), source, in, local, out, len, elementBytes);
    } else if (s.reduce) {
      // Without a peer the step folds local into out in place, in the
      // order asked for (max/min keep the first of equal operands).
      const std::byte* first = in.empty() ? out : in.data();
      const std::byte* second = local;
      if (in.empty() && s.localFirst) std::swap(first, second);
      kernels::reduce(out, first, second, len / elementBytes, s.type, s.op);
      if (s.divide) kernels::divide(out, len / elementBytes, s.type, s.divisor);
    } else {
      if (out != source) {  // equal when the bytes were received there
        // A large result copied into the caller's buffer goes past the
        // caches: nothing reads it again soon.
        if (s.streamOut)
          kernels::streamCopy(out, source, len);
        else
          memcpy(out, source, len);
      }
      if (s.divide) kernels::divide(out, len / elementBytes, s.type, s.divisor);
    }
    if (s.sendTo != nullptr) s.sendTo->commitSend(len);
    if (s.recvFrom != nullptr) s.recvFrom->releaseRecv(len);
    s.done += len;
    moved = true;
  }
  return moved;
}

}  // namespace mcl
