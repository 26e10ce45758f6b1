// A copy whose destination bypasses the caches (non-temporal stores), for
// the final copy of a large result into the caller's buffer: a normal store
// first reads the destination line in (a third more memory traffic), and
// the line then pushes out data the next pieces need. Small copies stay
// with memcpy: the result would be read back from memory.
#pragma once

#include <cstddef>

namespace mcl::kernels {

// Copies bytes; dst and src must not overlap. Ordered before any later
// store (a fence ends it).
void streamCopy(void* dst, const void* src, size_t bytes);

}  // namespace mcl::kernels
