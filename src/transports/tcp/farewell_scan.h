// Once a TCP connection has broken, the peer's farewell (why it stopped)
// may still sit in the socket behind pieces there was no slot for: a peer
// that gives up says farewell, then closes, and the close can reach us as
// a failed send before we read that far. FarewellScan looks through those
// bytes for it; the pieces themselves no longer matter.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "transports/tcp/tcp_connection.h"

namespace mcl::transport::tcp {

class FarewellScan {
 public:
  // Where a socket's reading stood: `partial` holds what was read of a
  // header, or of a farewell's text; inside a piece, `payloadLeft` bytes of
  // it are still to come. slotBytes: the longest piece the peer sends.
  static FarewellScan inHeader(std::span<const std::byte> partial,
                               uint32_t slotBytes);
  static FarewellScan inPayload(uint64_t payloadLeft, uint32_t slotBytes);
  static FarewellScan inFarewell(std::span<const std::byte> partial,
                                 uint32_t slotBytes);

  // Takes the next bytes of the stream; false once it wants no more (the
  // farewell is whole, or a header makes no sense).
  bool feed(std::span<const std::byte> bytes);
  bool wantsMore() const { return state_ != State::Done; }
  // The farewell's text (cut short if the stream ended inside it), or empty
  // when none came.
  std::string farewell() const;

 private:
  enum class State { Header, Payload, Text, Done };
  explicit FarewellScan(uint32_t slotBytes) : slotBytes_(slotBytes) {}
  void takeHeaderByte(std::byte b);

  uint32_t slotBytes_;
  State state_ = State::Header;
  std::array<std::byte, sizeof(PieceHeader)> header_{};
  size_t headerBytes_ = 0;
  uint64_t payloadLeft_ = 0;
  bool sawFarewell_ = false;
  std::string text_;
};

}  // namespace mcl::transport::tcp
