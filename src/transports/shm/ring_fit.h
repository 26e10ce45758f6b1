// How large the shared-memory rings of one host may be. Every rank of a
// host owns a segment with a ring from each local rank per channel; all of
// them must fit in the room /dev/shm had when the ranks met, or a page the
// tmpfs cannot supply kills a rank with SIGBUS at first touch. Where the
// asked MCL_SHM_SLOTS x MCL_SHM_SLOT_BYTES do not fit, the rings shrink
// (fewer slots, then smaller ones) down to a floor that still moves data;
// below it, nothing fits. Each local rank computes this from the same
// figures (every rank's room, from the rendezvous), so they agree without
// another round.
#pragma once

#include <cstdint>

#include "transports/shm/shm_options.h"

namespace mcl::transport::shm {

// The smallest rings mcl shrinks to (unless asked for smaller ones).
constexpr uint32_t kFloorSlots = 2;
constexpr uint32_t kFloorSlotBytes = 1024;

struct RingFit {
  ShmOptions asked;              // MCL_SHM_SLOTS, MCL_SHM_SLOT_BYTES
  ShmOptions options;            // what to build: as asked, or shrunk
  uint64_t hostBytes = 0;        // every local rank's segment, at options
  uint64_t askedHostBytes = 0;   // the same at the asked options
  uint64_t floorHostBytes = 0;   // the same at the floor
  uint64_t budget = UINT64_MAX;  // what the rings may take of the room
  bool shrunk = false;
  bool fits = true;  // false: not even the floor fits (options: the floor)
};

// One rank's segment in bytes, rounded up to whole pages (what the tmpfs
// charges).
uint64_t segmentPagesBytes(uint32_t localRanks, uint32_t slots,
                           uint32_t slotBytes);

// roomBytes: the least free room any local rank saw (UINT64_MAX: unbounded,
// as on macOS). The rings may take three quarters of it: the rest is for
// mclMemAlloc buffers and whatever else the host runs.
RingFit fitRings(const ShmOptions& asked, uint32_t localRanks,
                 uint64_t roomBytes);

}  // namespace mcl::transport::shm
