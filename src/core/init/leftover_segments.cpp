#include "core/init/leftover_segments.h"

#include <unistd.h>

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "base/byte_text.h"
#include "base/log.h"
#include "core/comm/shared_allocations.h"
#include "core/registry/transport_registry.h"
#include "platform/shared_memory.h"

namespace mcl {

void removeLeftoverSegments() {
  static std::mutex mutex;
  static std::chrono::steady_clock::time_point last;
  static int sweptBy = 0;  // the pid: a forked child sweeps afresh
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto now = std::chrono::steady_clock::now();
    if (sweptBy == getpid() && now - last < std::chrono::seconds(10)) return;
    sweptBy = getpid();
    last = now;
  }
  const std::vector<TransportEntry> transports = transportRegistry();
  for (const platform::SegmentEntry& e : platform::listSegments("mcl-")) {
    if (!e.ownedByThisUser) continue;
    int owner = 0;
    const char* what = nullptr;
    if (allocationAbandoned(e.name, &owner)) what = "mclMemAlloc memory";
    // A transport's segments (the shared-memory rings), from its registry
    // entry: core names no concrete transport.
    for (const TransportEntry& t : transports)
      if (what == nullptr && t.abandonedSegment != nullptr &&
          t.abandonedSegment(e.name, &owner))
        what = t.segmentHolds;
    if (what == nullptr) continue;
    platform::SharedMemory::unlink(e.name);
    MCL_LOG(Info, kLogShm,
            "removed /dev/shm%s (%s, %s) that process %d left behind: it is "
            "gone",
            e.name.c_str(), what, bytesText(e.bytes).c_str(), owner);
  }
}

}  // namespace mcl
