// The layout of a rank's shared-memory segment: a header with the rank's
// doorbell, then one inbound ring per local peer (the peer produces, this
// rank consumes). Single producer, single consumer, fixed-size slots; each
// slot's sequence word sits in the same cache line as its first bytes, so a
// small message crosses in one cache-line transfer.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace mcl::transport::shm {

constexpr size_t kCacheLine = 64;
// Each ordered pair of ranks has one ring per channel, so point-to-point
// bytes never mix with a collective's (a group may run both at once).
enum Channel : uint32_t { kCollectiveChannel = 0, kPointToPointChannel = 1 };
constexpr uint32_t kChannels = 2;
constexpr uint64_t kSegmentMagic = 0x6d636c2d73686d31ull;  // "mcl-shm1"

struct alignas(kCacheLine) SegmentHeader {
  uint64_t magic;
  uint32_t rings;      // per channel, one per local rank in rank order
  uint32_t slots;      // per ring
  uint32_t slotBytes;  // payload bytes per slot
  uint32_t ownerPid;
  uint64_t ringStride;  // bytes from one ring to the next
  // The owner reserved every page: peers may map them all at once (else
  // that would take pages a small /dev/shm does not have).
  uint32_t pagesReserved;
  // The owner's pid namespace (platform::pidNamespace): a sweep for
  // leftovers trusts ownerPid only within its own.
  uint64_t ownerPidNamespace;
  // Peers bump the doorbell and wake it when `sleeping` is set.
  alignas(kCacheLine) std::atomic<uint32_t> doorbell;
  alignas(kCacheLine) std::atomic<uint32_t> sleeping;
};

constexpr size_t kFarewellBytes = 256;

// Written by the consumer only.
struct alignas(kCacheLine) RingControl {
  std::atomic<uint64_t> consumed;  // slots released so far
  // The consumer's farewell to the producer (Connection::sayFarewell): the
  // text (NUL-terminated) first, then the flag, so a producer that sees
  // the flag reads the whole text.
  alignas(kCacheLine) std::atomic<uint32_t> farewell;
  char farewellText[kFarewellBytes];
};

struct SlotHeader {
  std::atomic<uint64_t> sequence;  // index + 1 of the piece it holds
  uint32_t length;                 // payload bytes
  uint32_t reserved;
};
constexpr size_t kSlotPayloadOffset = 16;
static_assert(sizeof(SlotHeader) <= kSlotPayloadOffset);
// Shared between processes: only lock-free atomics work there.
static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);

inline size_t slotStride(uint32_t slotBytes) {
  return (kSlotPayloadOffset + slotBytes + kCacheLine - 1) / kCacheLine *
         kCacheLine;
}

inline size_t ringBytes(uint32_t slots, uint32_t slotBytes) {
  return sizeof(RingControl) + slots * slotStride(slotBytes);
}

inline size_t segmentBytes(uint32_t rings, uint32_t slots, uint32_t slotBytes) {
  return sizeof(SegmentHeader) + rings * ringBytes(slots, slotBytes);
}

// A view of one ring inside a mapped segment.
struct RingView {
  RingControl* control = nullptr;
  std::byte* slots = nullptr;
  uint32_t slotCount = 0;
  uint32_t slotBytes = 0;
  size_t stride = 0;

  SlotHeader* slot(uint64_t index) const {
    return reinterpret_cast<SlotHeader*>(slots + (index % slotCount) * stride);
  }
  std::byte* payload(uint64_t index) const {
    return reinterpret_cast<std::byte*>(slot(index)) + kSlotPayloadOffset;
  }
};

inline RingView ringInSegment(SegmentHeader* header, uint32_t ringIndex) {
  auto* base = reinterpret_cast<std::byte*>(header) + sizeof(SegmentHeader) +
               ringIndex * header->ringStride;
  RingView v;
  v.control = reinterpret_cast<RingControl*>(base);
  v.slots = base + sizeof(RingControl);
  v.slotCount = header->slots;
  v.slotBytes = header->slotBytes;
  v.stride = slotStride(header->slotBytes);
  return v;
}

}  // namespace mcl::transport::shm
