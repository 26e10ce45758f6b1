// What zero-copy collectives need from the communicator: where a caller's
// buffer lives when same-host peers can map it (mclMemAlloc memory), and
// the address at which this process sees a peer's such buffer. Core
// implements it; algorithms only call it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mcl {

// A buffer inside a mapped segment, as peers are told of it (sent over the
// rings as plain bytes).
struct SharedBufferRef {
  char segment[32] = {};  // the segment's name, NUL-terminated
  uint64_t segmentBytes = 0;
  uint64_t offset = 0;  // of the buffer in the segment
};

class SharedBufferMap {
 public:
  virtual ~SharedBufferMap() = default;
  // True, with *ref filled, when all of [data, data + bytes) lies in one
  // segment peers can map.
  virtual bool find(const void* data, size_t bytes,
                    SharedBufferRef* ref) const = 0;
  // Where this process sees `bytes` at ref in the peer's segment, mapping
  // it on first use. Throws Error (naming the peer) when it cannot.
  virtual std::byte* map(int peer, const SharedBufferRef& ref,
                         size_t bytes) = 0;
  // Counts a call that ran in place, for the footprint report.
  virtual void noteInPlaceCall() = 0;
};

}  // namespace mcl
