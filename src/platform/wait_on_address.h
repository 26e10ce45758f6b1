// Sleeping on a 32-bit word in memory shared between processes, and waking
// its sleepers: futex on Linux, os_sync_wait_on_address on macOS. This is the
// last stage of the adaptive wait, so a wake-up costs ~25 us on a VM; callers
// spin and yield first.
#pragma once

#include <atomic>
#include <cstdint>

namespace mcl::platform {

// Sleeps while *word == expected, at most timeoutNs. Returns early on a wake,
// a changed value or a signal; the caller re-checks its condition.
void waitOnAddress(std::atomic<uint32_t>* word, uint32_t expected,
                   int64_t timeoutNs);

// Wakes every sleeper on word, in any process that maps it.
void wakeAddress(std::atomic<uint32_t>* word);

}  // namespace mcl::platform
