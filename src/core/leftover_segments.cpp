#include "core/leftover_segments.h"

#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

#include "base/byte_text.h"
#include "base/log.h"
#include "core/shared_allocations.h"
#include "platform/shared_memory.h"
#include "transports/shm/shm_segments.h"

namespace mcl {

namespace {

// A ring segment: "/mcl-" then 16 hex digits of the communicator id.
bool namedLikeRings(const std::string& name) {
  if (name.size() < 22 || name.compare(0, 5, "/mcl-") != 0 || name[21] != '-')
    return false;
  for (size_t i = 5; i < 21; ++i)
    if (std::string("0123456789abcdef").find(name[i]) == std::string::npos)
      return false;
  return true;
}

}  // namespace

void removeLeftoverSegments() {
  using Clock = std::chrono::steady_clock;
  static std::mutex mutex;
  static Clock::time_point last;
  static int sweptBy = 0;  // the pid: a forked child sweeps afresh
  {
    std::lock_guard<std::mutex> lock(mutex);
    const Clock::time_point now = Clock::now();
    if (sweptBy == getpid() && now - last < std::chrono::seconds(10)) return;
    sweptBy = getpid();
    last = now;
  }
  for (const platform::SegmentEntry& e : platform::listSegments("mcl-")) {
    if (!e.ownedByThisUser) continue;
    int owner = 0;
    const char* what = nullptr;
    if (e.name.compare(0, 6, "/mcl-m") == 0 &&
        allocationAbandoned(e.name, &owner))
      what = "mclMemAlloc memory";
    else if (namedLikeRings(e.name) &&
             transport::shm::ringSegmentAbandoned(e.name, &owner))
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
