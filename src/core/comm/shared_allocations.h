// mclMemAlloc's memory: named shared-memory segments, one per allocation,
// that same-host peers open by name. The registry is process-wide (any
// communicator may use any allocation) and thread-safe.
#pragma once

#include <cstddef>
#include <string>

#include "algorithms/shared_buffers.h"

namespace mcl {

// A new zero-filled, page-aligned allocation of at least `bytes`. Throws
// Error: mclInvalidArgument for 0, mclSystemError when the OS refuses.
void* allocateShared(size_t bytes);

// Frees an allocation by the address allocateShared returned. Throws
// mclInvalidArgument for any other address, mclInvalidUsage while a
// communicator has part of it registered.
void freeShared(void* base);

// True, with *ref filled, when [data, data + bytes) lies in one allocation.
bool findShared(const void* data, size_t bytes, SharedBufferRef* ref);

// Registration keeps an allocation from being freed. pinShared returns
// false (and pins nothing) when [data, data + bytes) is not inside one.
bool pinShared(const void* data, size_t bytes);
void unpinShared(const void* data);

// For init's sweep of /dev/shm: whether `name` is an allocation's segment
// whose owner (*ownerPid) is gone, as seen from this pid namespace.
bool allocationAbandoned(const std::string& name, int* ownerPid);

}  // namespace mcl
