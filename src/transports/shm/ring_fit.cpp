#include "transports/shm/ring_fit.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "transports/shm/shm_layout.h"

namespace mcl::transport::shm {

namespace {

uint64_t hostRingBytes(uint32_t localRanks, const ShmOptions& o) {
  return uint64_t{localRanks} *
         segmentPagesBytes(localRanks, o.slots, o.slotBytes);
}

// One step smaller, or false at the floor. Slots go first, down to 4:
// halving them halves the bytes in flight but keeps each step's size.
// Then the slots shrink to 16 KiB, then to 2 slots, then to the floor's
// size.
bool shrinkOnce(ShmOptions& o, const ShmOptions& floor) {
  constexpr uint32_t kFewSlots = 4;
  constexpr uint32_t kSmallSlotBytes = 16 * 1024;
  auto halfBytes = [](uint32_t bytes, uint32_t least) {
    return std::max(least, bytes / 2 / 64 * 64);
  };
  if (o.slots > std::max(kFewSlots, floor.slots)) {
    o.slots = std::max(std::max(kFewSlots, floor.slots), o.slots / 2);
  } else if (o.slotBytes > std::max(kSmallSlotBytes, floor.slotBytes)) {
    o.slotBytes =
        halfBytes(o.slotBytes, std::max(kSmallSlotBytes, floor.slotBytes));
  } else if (o.slots > floor.slots) {
    o.slots = floor.slots;
  } else if (o.slotBytes > floor.slotBytes) {
    o.slotBytes = halfBytes(o.slotBytes, floor.slotBytes);
  } else {
    return false;
  }
  return true;
}

}  // namespace

uint64_t segmentPagesBytes(uint32_t localRanks, uint32_t slots,
                           uint32_t slotBytes) {
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t bytes = segmentBytes(localRanks * kChannels, slots, slotBytes);
  return (bytes + page - 1) / page * page;
}

RingFit fitRings(const ShmOptions& asked, uint32_t localRanks,
                 uint64_t roomBytes) {
  RingFit fit;
  fit.asked = asked;
  fit.options = asked;
  ShmOptions floor = asked;
  floor.slots = std::min(asked.slots, kFloorSlots);
  floor.slotBytes = std::min(asked.slotBytes, kFloorSlotBytes);
  fit.askedHostBytes = hostRingBytes(localRanks, asked);
  fit.floorHostBytes = hostRingBytes(localRanks, floor);
  fit.budget = roomBytes == UINT64_MAX ? UINT64_MAX : roomBytes / 4 * 3;
  fit.hostBytes = fit.askedHostBytes;
  while (fit.hostBytes > fit.budget) {
    fit.shrunk = true;
    if (!shrinkOnce(fit.options, floor)) {
      fit.fits = false;
      break;
    }
    fit.hostBytes = hostRingBytes(localRanks, fit.options);
  }
  return fit;
}

}  // namespace mcl::transport::shm
