#include "platform/wait_on_address.h"

#include <atomic>
#include <cstdint>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#elif defined(__APPLE__)
#include <os/os_sync_wait_on_address.h>
#else
#error "mcl: no wait-on-address primitive for this OS"
#endif

namespace mcl::platform {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

#if defined(__linux__)

// Shared (not FUTEX_PRIVATE) operations: the word lives in memory mapped by
// several processes.
void waitOnAddress(std::atomic<uint32_t>* word, uint32_t expected,
                   int64_t timeoutNs) {
  if (timeoutNs <= 0) return;
  timespec ts;
  ts.tv_sec = timeoutNs / 1000000000;
  ts.tv_nsec = timeoutNs % 1000000000;
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected,
          &ts, nullptr, 0);
}

void wakeAddress(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT32_MAX,
          nullptr, nullptr, 0);
}

#elif defined(__APPLE__)

// os_sync_wait_on_address is public API since macOS 14.4; mcl targets 26+.
void waitOnAddress(std::atomic<uint32_t>* word, uint32_t expected,
                   int64_t timeoutNs) {
  if (timeoutNs <= 0) return;
  os_sync_wait_on_address_with_timeout(
      reinterpret_cast<void*>(word), expected, sizeof(uint32_t),
      OS_SYNC_WAIT_ON_ADDRESS_SHARED, OS_CLOCK_MACH_ABSOLUTE_TIME,
      static_cast<uint64_t>(timeoutNs));
}

void wakeAddress(std::atomic<uint32_t>* word) {
  os_sync_wake_by_address_all(reinterpret_cast<void*>(word), sizeof(uint32_t),
                              OS_SYNC_WAKE_BY_ADDRESS_SHARED);
}

#endif

}  // namespace mcl::platform
