// What a local peer writes in shared memory that this side decodes; the
// first byte picks which:
//   0  the header of the peer's segment, checked by mapPeer before any ring
//      in it is used (shm_segments.h): a byte says how many ranks share the
//      host (and, bit 7, to put this build's ring stride into the header,
//      so seeds stay valid when a ring's control grows); the rest of the
//      input is the segment
//   1  what the peer writes into the rings of one connection
//      (shm_connection.h): the slot headers {sequence, length} of our
//      inbound ring, read by peekRecv, then the control of the ring we
//      produce into (its count of slots consumed, its farewell), read by
//      acquireSend, peerAlive and peerGoneReason; the rest of the input
//      fills those slots, then that control
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <string>

#include "fuzz_check.h"
#include "transports/shm/shm_connection.h"
#include "transports/shm/shm_segments.h"

namespace {

namespace shm = mcl::transport::shm;
using mcl::fuzz::acceptedOr;
using mcl::fuzz::check;

// Bytes aligned as a mapping is, of exactly the input's size, so the
// address sanitizer sees any read past the end.
class Mapping {
 public:
  explicit Mapping(size_t bytes)
      : bytes_(bytes),
        data_(static_cast<std::byte*>(::operator new(
            bytes == 0 ? 1 : bytes, std::align_val_t(shm::kCacheLine)))) {}
  ~Mapping() { ::operator delete(data_, std::align_val_t(shm::kCacheLine)); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  std::byte* data() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  size_t bytes_;
  std::byte* data_;
};

void peerSegment(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const uint32_t rings = shm::kChannels * (1 + data[0] % 4);  // 1..4 ranks
  const bool strideOfThisBuild = (data[0] & 0x80) != 0;
  Mapping segment(size - 1);
  memcpy(segment.data(), data + 1, segment.size());
  auto* header = reinterpret_cast<shm::SegmentHeader*>(segment.data());
  if (strideOfThisBuild && segment.size() >= sizeof(shm::SegmentHeader))
    header->ringStride = shm::ringBytes(header->slots, header->slotBytes);
  if (!shm::segmentLayoutValid(segment.data(), segment.size(), rings)) return;
  check(header->rings == rings, "the segment has the rings asked for");
  // Computed wide: every ring, with all its slots, inside the mapping.
  using Wide = unsigned __int128;
  const Wide end = Wide{sizeof(shm::SegmentHeader)} +
                   Wide{header->rings} * Wide{header->ringStride};
  check(end <= segment.size(), "every ring lies inside the segment");
  for (uint32_t i = 0; i < rings; ++i) {
    shm::RingView ring = shm::ringInSegment(header, i);
    (void)ring.control->consumed.load();
    (void)ring.slot(ring.slotCount - 1)->sequence.load();
    ring.payload(ring.slotCount - 1)[ring.slotBytes - 1] = std::byte{0};
  }
}

// Our own segment: one rank pair, a ring of 4 slots of 128 bytes.
constexpr uint32_t kSlots = 4;
constexpr uint32_t kSlotBytes = 128;

void inboundRing(const uint8_t* data, size_t size) {
  const uint32_t rings = shm::kChannels;
  Mapping segment(shm::segmentBytes(rings, kSlots, kSlotBytes));
  memset(segment.data(), 0, segment.size());
  auto* header = new (segment.data()) shm::SegmentHeader{};
  header->magic = shm::kSegmentMagic;
  header->rings = rings;
  header->slots = kSlots;
  header->slotBytes = kSlotBytes;
  header->ringStride = shm::ringBytes(kSlots, kSlotBytes);
  shm::RingView in = shm::ringInSegment(header, 0);
  shm::RingView out = shm::ringInSegment(header, 1);
  // What the peer wrote: our inbound ring's slots (not its control, ours),
  // and the control of the ring we produce into.
  const size_t slotArea = size_t{kSlots} * in.stride;
  memcpy(in.slots, data, std::min(size, slotArea));
  if (size > slotArea)
    memcpy(static_cast<void*>(out.control), data + slotArea,
           std::min(size - slotArea, sizeof(shm::RingControl)));
  // Pid 0: no process to ask, only the farewell says the peer is gone.
  shm::ShmConnection connection(1, 0, out, header, in, shm::RingStores::Auto);
  check(connection.peerAlive() == (out.control->farewell.load() == 0),
        "the peer is gone once it said farewell");
  check(connection.peerGoneReason().size() < shm::kFarewellBytes,
        "a farewell's text is cut to its room");
  std::span<std::byte> room = connection.acquireSend(kSlotBytes);
  check(room.empty() ||
            (room.data() == out.payload(0) && room.size() <= kSlotBytes),
        "send room is the next slot, whatever the peer says it consumed");
  acceptedOr(mclRemoteError, [&] {
    for (uint64_t index = 0; index < kSlots; ++index) {
      std::span<const std::byte> piece = connection.peekRecv();
      if (piece.empty()) return;
      const std::byte* slot = in.payload(index);
      check(piece.data() >= slot &&
                piece.data() + piece.size() <= slot + kSlotBytes,
            "a received piece lies inside its slot");
      // In two parts, as a step that folds fewer bytes than arrived does.
      const size_t first = (piece.size() + 1) / 2;
      connection.releaseRecv(first);
      if (first < piece.size()) {
        std::span<const std::byte> rest = connection.peekRecv();
        check(rest.size() == piece.size() - first &&
                  rest.data() == piece.data() + first,
              "the rest of a piece follows its first part");
        connection.releaseRecv(rest.size());
      }
      check(in.control->consumed.load() == index + 1,
            "a released slot is handed back");
    }
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0)
    peerSegment(data + 1, size - 1);
  else
    inboundRing(data + 1, size - 1);
  return 0;
}
