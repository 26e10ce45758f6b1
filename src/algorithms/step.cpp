#include "algorithms/step.h"

#include <algorithm>
#include <cstring>

#include "algorithms/kernels/reduce.h"
#include "algorithms/kernels/stream_copy.h"
#include "algorithms/kernels/types.h"
#include "base/error.h"

namespace mcl {

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
    // The result is produced once, into the outgoing slot when there is one,
    // and copied to `out` from there.
    std::byte* target = s.sendTo != nullptr ? slot.data() : out;
    const std::byte* source = in.empty() ? local : in.data();
    if (s.reduce) {
      // Without a peer the step folds local into out in place, in the
      // order asked for (max/min keep the first of equal operands).
      const std::byte* first = in.empty() ? out : in.data();
      const std::byte* second = local;
      if (in.empty() && s.localFirst) std::swap(first, second);
      kernels::reduce(target, first, second, len / elementBytes, s.type, s.op);
    } else if (target != source) {
      // A large result copied into the caller's buffer goes past the
      // caches: nothing reads it again soon.
      if (target == out && s.streamOut)
        kernels::streamCopy(target, source, len);
      else
        memcpy(target, source, len);
    }
    if (s.divide)
      kernels::divide(target, len / elementBytes, s.type, s.divisor);
    if (s.sendTo != nullptr && out != nullptr) {
      if (s.streamOut)
        kernels::streamCopy(out, target, len);
      else
        memcpy(out, target, len);
    }
    if (s.sendTo != nullptr) s.sendTo->commitSend(len);
    if (s.recvFrom != nullptr) s.recvFrom->releaseRecv(len);
    s.done += len;
    moved = true;
  }
  return moved;
}

}  // namespace mcl
