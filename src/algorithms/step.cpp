#include "algorithms/step.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "algorithms/kernels/reduce.h"
#include "algorithms/kernels/stream_copy.h"
#include "algorithms/kernels/types.h"
#include "base/error.h"

namespace mcl {
namespace {

using Clock = std::chrono::steady_clock;

// Room to fold a piece before it streams into the ring: one slot, so it
// stays in the core's own cache.
std::byte* foldScratch(size_t bytes) {
  thread_local std::vector<std::byte> scratch;
  if (scratch.size() < bytes) scratch.resize(bytes);
  return scratch.data();
}

// Produces one piece into the outgoing slot: the fold of `in` and local
// (or the piece to pass on), divided when asked, and copied to `out` too.
// The transport may ask for non-temporal stores (shm: when the peer's core
// is far, see shm/store_choice.h); the result is then made in this core's
// cache first, and `out` is filled from there, not read back from the
// slot the stores sent to memory.
void writeSlot(Step& s, std::byte* slot, const std::byte* source,
               std::span<const std::byte> in, std::byte* out, size_t len,
               size_t elementBytes) {
  const size_t count = len / elementBytes;
  const bool chosen = s.sendTo->choosesSlotStores(len);
  const bool stream = chosen && s.sendTo->streamNextSlot();
  const Clock::time_point start = chosen ? Clock::now() : Clock::time_point();
  const std::byte* result = slot;  // where the piece is, in cache
  if (s.reduce || s.divide) {
    std::byte* made = stream ? foldScratch(len) : slot;
    if (s.reduce) {
      // Without a peer's piece, the fold is of out and local, in the
      // order asked for (max/min keep the first of equal operands).
      const std::byte* first = in.empty() ? out : in.data();
      const std::byte* second = s.local + s.done;
      if (in.empty() && s.localFirst) std::swap(first, second);
      kernels::reduce(made, first, second, count, s.type, s.op);
    } else if (made != source) {
      memcpy(made, source, len);
    }
    if (s.divide) kernels::divide(made, count, s.type, s.divisor);
    if (stream) kernels::streamCopy(slot, made, len);
    result = made;
  } else if (stream) {
    kernels::streamCopy(slot, source, len);
    result = source;
  } else {
    memcpy(slot, source, len);
  }
  if (chosen)
    s.sendTo->recordSlotStore(
        stream, len,
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() -
                                                             start));
  if (out != nullptr) {
    if (s.streamOut)
      kernels::streamCopy(out, result, len);
    else
      memcpy(out, result, len);
  }
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
      throw error(mclInternalError,
                  "%s #%llu: a piece of %zu bytes splits a %zu-byte element "
                  "(a transport broke the whole-element rule)",
                  opKindName(s.kind),
                  static_cast<unsigned long long>(s.sequence), len,
                  elementBytes);
    const std::byte* local = s.local ? s.local + s.done : nullptr;
    std::byte* out = s.out ? s.out + s.done : nullptr;
    const std::byte* source = in.empty() ? local : in.data();
    if (s.sendTo != nullptr) {
      writeSlot(s, slot.data(), source, in, out, len, elementBytes);
    } else if (s.reduce) {
      // Without a peer the step folds local into out in place, in the
      // order asked for (max/min keep the first of equal operands).
      const std::byte* first = in.empty() ? out : in.data();
      const std::byte* second = local;
      if (in.empty() && s.localFirst) std::swap(first, second);
      kernels::reduce(out, first, second, len / elementBytes, s.type, s.op);
      if (s.divide) kernels::divide(out, len / elementBytes, s.type, s.divisor);
    } else {
      if (out != source) {
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
