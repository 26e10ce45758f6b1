// The 64-byte header every RDMA frame of mcl starts with, and the counts
// it carries: what RdmaConnection's two halves (rdma_connection.cpp for
// data, rdma_control.cpp for credits, acknowledgements and retransmits)
// agree on. A frame is data (a piece of the stream, numbered) or control
// (no data: credits, acknowledgements, a probe or its answer, a farewell).
#pragma once

#include <cstddef>
#include <cstdint>

namespace mcl::transport::rdma {

constexpr size_t kFrameHeaderBytes = 64;
constexpr size_t kMaxWires = 8;

// seq of a control frame; any other seq is a data piece's number.
constexpr uint64_t kControlFrame = UINT64_MAX;

// Control flags.
constexpr uint8_t kFlagProbe = 1;     // answer with your acknowledgements
constexpr uint8_t kFlagAnswer = 2;    // the answer to a probe
constexpr uint8_t kFlagFarewell = 4;  // payload: why the sender stops
// A control frame that spent a credit (every one does when its sender has
// a credit left): numbered with the data, so a lost one gives its credit
// back like lost data. One sent without (its sender's data spent every
// credit) lands in a spare receive and is not numbered.
constexpr uint8_t kFlagCredited = 8;
// The sender gave a wire up (its `lost` bits): sent on every wire left
// that has a credit or a spare receive for it, so that the peer stops
// using the wire too even when it has nothing to send (every frame's
// header carries the bits as well).
constexpr uint8_t kFlagLost = 16;

struct FrameHeader {
  uint64_t seq;    // the piece's number, or kControlFrame
  uint32_t bytes;  // payload bytes
  // Frames that spend a credit (data, originals and resends alike, and
  // credited control frames): this wire's transmission number, so the
  // receiver tells a lost transmission (a gap) from a duplicate (a number
  // it has seen).
  uint32_t transmission;
  uint8_t wires;   // how many counts follow
  uint8_t flags;   // control frames
  uint8_t resend;  // bit w: wire w lost data here; send it again from the
                   // acknowledged count on
  // Uncredited frames received on this wire from the peer (wrapping): the
  // sender's budget of spare receives comes back with it.
  uint8_t uncreditedSeen;
  // This wire's credited transmissions posted before this frame: a frame
  // of any kind tells the receiver of transmissions lost before it (a
  // queue pair delivers in order), even one that spends no credit.
  uint32_t before;
  // A data frame's number among this wire's data pieces (0, 1, ...): the
  // order the wire's acknowledgement counts. Once a wire is lost, a piece
  // (seq) may go over any wire left, so seq alone no longer says it.
  uint32_t index;
  // Per wire, wrapping 16-bit counts: the credits granted (receives
  // reposted for data, with transmissions known lost) and the data pieces
  // received in order (the acknowledgement).
  uint16_t credits[kMaxWires];
  uint16_t acked[kMaxWires];
  // Bit w: the sender gave wire w up (a port down, a send that failed);
  // it sends nothing more on it, and neither may the receiver.
  uint8_t lost;
};
static_assert(sizeof(FrameHeader) <= kFrameHeaderBytes);

// Widens a wrapping 16-bit count to the 64-bit one it follows (`known`),
// where the two never drift apart by 32768.
inline uint64_t widen16(uint16_t seen, uint64_t known) {
  const auto ahead = static_cast<int16_t>(seen - static_cast<uint16_t>(known));
  return ahead > 0 ? known + static_cast<uint64_t>(ahead) : known;
}

// Work-request ids: bit 63 sends; bit 62 control sends; the rest the
// piece's number on its wire (data: FrameHeader::index) or the control
// frame's (control), or the receive slot.
constexpr uint64_t kSendTag = uint64_t{1} << 63;
constexpr uint64_t kControlTag = uint64_t{1} << 62;
constexpr uint64_t kWrNumberMask = kControlTag - 1;

// A record on an RDMA connection's TCP standby (rdma_standby.cpp): a head
// of 64 bytes (so that the payload behind it keeps a piece's 64-byte
// multiple) and `bytes` of one piece's payload. A piece too large for one
// TCP slot goes in several records, the last flagged.
struct StandbyRecord {
  uint64_t seq;    // the piece; in a notice, the piece the sender reads next
  uint32_t bytes;  // payload bytes after the head (0 in a notice)
  uint32_t flags;
  uint8_t unused[48];
};
static_assert(sizeof(StandbyRecord) == 64);
constexpr size_t kStandbyHead = sizeof(StandbyRecord);
constexpr uint32_t kStandbyLastPart = 1;  // the piece's last record
constexpr uint32_t kStandbyNotice = 2;    // "every wire is lost here"

}  // namespace mcl::transport::rdma
