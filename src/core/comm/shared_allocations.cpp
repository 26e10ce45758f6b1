#include "core/comm/shared_allocations.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <system_error>
#include <utility>

#include "base/byte_text.h"
#include "base/error.h"
#include "base/segment_names.h"
#include "platform/host_identity.h"
#include "platform/shared_memory.h"

namespace mcl {

namespace {

struct Allocation {
  platform::SharedMemory memory;
  std::string name;
  int ownerPid = 0;  // a forked child inherits the map, not the names
  int pins = 0;
};

// Keyed by base address. Names are removed when an allocation is freed and
// when the process exits, so a peer can open an allocation by name for as
// long as its owner may pass it to a collective.
class Registry {
 public:
  std::mutex mutex;
  std::map<uintptr_t, Allocation> allocations_;

  // The allocation holding [p, p + bytes), or end().
  std::map<uintptr_t, Allocation>::iterator holding(const void* p,
                                                    size_t bytes) {
    const auto address = reinterpret_cast<uintptr_t>(p);
    auto it = allocations_.upper_bound(address);
    if (it == allocations_.begin()) return allocations_.end();
    --it;
    const uint64_t offset = address - it->first;
    if (offset >= it->second.memory.size() ||
        bytes > it->second.memory.size() - offset)
      return allocations_.end();
    return it;
  }
};

void unlinkAtExit();

// Never destroyed: communicators and user code may free memory from
// atexit handlers and static destructors, after a static would be gone.
Registry& registry() {
  static Registry* r = [] {
    auto* made = new Registry;
    std::atexit(unlinkAtExit);
    return made;
  }();
  return *r;
}

// A process that exits removes its names (the memory goes once peers let
// go of it); one that is killed leaves them in /dev/shm.
void unlinkAtExit() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const int pid = getpid();
  for (auto& [base, a] : r.allocations_)
    if (a.ownerPid == pid) platform::SharedMemory::unlink(a.name);
}

}  // namespace

bool allocationAbandoned(const std::string& name, int* ownerPid) {
  SegmentCreator creator;
  if (!segmentCreator(name, SegmentKind::Allocation, &creator) ||
      !creator.inThisPidNamespace || creator.pid == getpid())
    return false;
  *ownerPid = creator.pid;
  return !platform::processAlive(creator.pid);
}

void* allocateShared(size_t bytes) {
  if (bytes == 0) throw error(mclInvalidArgument, "size is 0");
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (bytes > SIZE_MAX - page)
    throw error(mclInvalidArgument, "size %zu is too large", bytes);
  const size_t rounded = (bytes + page - 1) / page * page;
  Allocation a;
  try {
    NamedSegment made =
        createNamedSegment(SegmentKind::Allocation, rounded, true);
    a.memory = std::move(made.memory);
    a.name = std::move(made.name);
  } catch (const std::system_error& e) {
    const platform::SharedMemoryRoom room = platform::sharedMemoryRoom();
    if (room.known && e.code().value() == ENOSPC)
      throw error(mclSystemError,
                  "cannot allocate %s of shared memory: %s has %s free of %s "
                  "(df -h %s): make it larger (docker run --shm-size), free "
                  "buffers, or run fewer ranks per host (%s)",
                  bytesText(bytes).c_str(), room.where,
                  bytesText(room.freeBytes).c_str(),
                  bytesText(room.totalBytes).c_str(), room.where, e.what());
    if (e.code().value() == EEXIST)
      throw error(mclSystemError, "cannot allocate %s of shared memory: %s",
                  bytesText(bytes).c_str(), e.what());
    throw error(mclSystemError,
                "cannot allocate %zu bytes of shared memory: %s (on Linux, "
                "/dev/shm's size bounds it)",
                bytes, e.what());
  }
  a.ownerPid = getpid();
  void* base = a.memory.data();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.allocations_.emplace(reinterpret_cast<uintptr_t>(base), std::move(a));
  return base;
}

void freeShared(void* base) {
  Registry& r = registry();
  std::unique_lock<std::mutex> lock(r.mutex);
  auto it = r.allocations_.find(reinterpret_cast<uintptr_t>(base));
  if (it == r.allocations_.end())
    throw error(mclInvalidArgument,
                "ptr %p is not an address mclMemAlloc returned (or it was "
                "freed already)",
                base);
  if (it->second.pins > 0)
    throw error(mclInvalidUsage,
                "ptr %p is still registered with a communicator (%d "
                "registration%s): mclCommDeregister first",
                base, it->second.pins, it->second.pins == 1 ? "" : "s");
  Allocation gone = std::move(it->second);
  r.allocations_.erase(it);
  lock.unlock();
  if (gone.ownerPid == getpid()) platform::SharedMemory::unlink(gone.name);
}

bool findShared(const void* data, size_t bytes, SharedBufferRef* ref) {
  if (data == nullptr) return false;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.holding(data, bytes);
  // A forked child's inherited memory is named by its parent, who may
  // free it any time: to the child it is ordinary memory.
  if (it == r.allocations_.end() || it->second.ownerPid != getpid())
    return false;
  *ref = SharedBufferRef{};
  std::memcpy(ref->segment, it->second.name.c_str(),
              std::min(it->second.name.size(), sizeof(ref->segment) - 1));
  ref->segmentBytes = it->second.memory.size();
  ref->offset = reinterpret_cast<uintptr_t>(data) - it->first;
  return true;
}

bool pinShared(const void* data, size_t bytes) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.holding(data, bytes);
  if (it == r.allocations_.end()) return false;
  ++it->second.pins;
  return true;
}

void unpinShared(const void* data) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.holding(data, 1);
  if (it != r.allocations_.end() && it->second.pins > 0) --it->second.pins;
}

}  // namespace mcl
