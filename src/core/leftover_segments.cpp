#include "core/leftover_segments.h"

#include <unistd.h>

#include <chrono>
#include <mutex>
#include <string>

#include "base/byte_text.h"
#include "base/log.h"
#include "core/shared_allocations.h"
#include "platform/shared_memory.h"
#include "transports/shm/shm_segments.h"

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
  for (const platform::SegmentEntry& e : platform::listSegments("mcl-")) {
    if (!e.ownedByThisUser) continue;
    int owner = 0;
    const char* what = nullptr;
    if (allocationAbandoned(e.name, &owner))
      what = "mclMemAlloc memory";
    else if (transport::shm::ringSegmentAbandoned(e.name, &owner))
      what = "shared-memory rings";
    if (what == nullptr) continue;
    platform::SharedMemory::unlink(e.name);
    MCL_LOG(Info, kLogShm,
            "removed /dev/shm%s (%s, %s) that process %d left behind: it is "
            "gone",
            e.name.c_str(), what, bytesText(e.bytes).c_str(), owner);
  }
}

}  // namespace mcl
