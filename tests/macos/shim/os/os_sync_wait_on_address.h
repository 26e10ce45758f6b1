/*
 * SHIM for scripts/check-macos.sh only: NOT Apple's header.
 *
 * The macOS SDK that the check compiles against (Zig 0.11's, macOS 13) is
 * older than <os/os_sync_wait_on_address.h>, which arrived with macOS 14.4.
 * This file declares the part of it mcl calls, from the prototypes Apple
 * documents (developer.apple.com, "os_sync_wait_on_address"), with the same
 * availability, so a call from code built for an older deployment target is
 * still caught (-Wunguarded-availability). Nothing else may include it.
 */
#ifndef MCL_SHIM_OS_SYNC_WAIT_ON_ADDRESS_H
#define MCL_SHIM_OS_SYNC_WAIT_ON_ADDRESS_H

#include <os/clock.h>
#include <stddef.h>
#include <stdint.h>

#define MCL_SHIM_OS_SYNC_AVAILABLE \
  __attribute__((availability(macos, introduced = 14.4)))

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t os_sync_wait_on_address_flags_t;
enum {
  OS_SYNC_WAIT_ON_ADDRESS_NONE = 0x00000000,
  OS_SYNC_WAIT_ON_ADDRESS_SHARED = 0x00000001,
};

typedef uint32_t os_sync_wake_by_address_flags_t;
enum {
  OS_SYNC_WAKE_BY_ADDRESS_NONE = 0x00000000,
  OS_SYNC_WAKE_BY_ADDRESS_SHARED = 0x00000001,
};

MCL_SHIM_OS_SYNC_AVAILABLE
int os_sync_wait_on_address(void* addr, uint64_t value, size_t size,
                            os_sync_wait_on_address_flags_t flags);

MCL_SHIM_OS_SYNC_AVAILABLE
int os_sync_wait_on_address_with_deadline(void* addr, uint64_t value,
                                          size_t size,
                                          os_sync_wait_on_address_flags_t flags,
                                          os_clockid_t clockid,
                                          uint64_t deadline);

MCL_SHIM_OS_SYNC_AVAILABLE
int os_sync_wait_on_address_with_timeout(void* addr, uint64_t value,
                                         size_t size,
                                         os_sync_wait_on_address_flags_t flags,
                                         os_clockid_t clockid,
                                         uint64_t timeout_ns);

MCL_SHIM_OS_SYNC_AVAILABLE
int os_sync_wake_by_address_any(void* addr, size_t size,
                                os_sync_wake_by_address_flags_t flags);

MCL_SHIM_OS_SYNC_AVAILABLE
int os_sync_wake_by_address_all(void* addr, size_t size,
                                os_sync_wake_by_address_flags_t flags);

#ifdef __cplusplus
}
#endif

#endif
