// Once a TCP connection has broken, the peer's farewell (why it stopped)
// may still sit in the socket behind pieces there was no slot for: a peer
// that gives up says farewell, then closes, and the close can reach us as
// a failed send before we read that far. FarewellScan looks through those
// bytes for it; the pieces themselves no longer matter. Under wire
// protection every frame ends in a tag: the scan skips the pieces' tags,
// keeps the farewell's and counts the pieces it passed, so that the caller
// can check that tag against the farewell's index on that socket.
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
  // it are still to come (its tag included). slotBytes: the longest piece
  // the peer sends; tagBytes: the tag after each frame (0 unprotected).
  static FarewellScan inHeader(std::span<const std::byte> partial,
                               uint32_t slotBytes, size_t tagBytes = 0);
  static FarewellScan inPayload(uint64_t payloadLeft, uint32_t slotBytes,
                                size_t tagBytes = 0);
  static FarewellScan inFarewell(std::span<const std::byte> partial,
                                 uint32_t slotBytes, size_t tagBytes = 0);

  // Takes the next bytes of the stream; false once it wants no more (the
  // farewell is whole, or a header makes no sense).
  bool feed(std::span<const std::byte> bytes);
  bool wantsMore() const { return state_ != State::Done; }
  // The farewell's text (cut short if the stream ended inside it), or empty
  // when none came.
  std::string farewell() const;
  // Under protection: the farewell's frame as it came (kFarewellTextBytes
  // of text, encrypted or not, then the tag), or empty unless it came
  // whole; and how many pieces ended between where the scan began and the
  // farewell (the piece being read when it began counts).
  std::span<const std::byte> sealedFrame() const;
  uint64_t piecesPassed() const { return piecesPassed_; }

 private:
  enum class State { Header, Payload, Text, Done };
  FarewellScan(uint32_t slotBytes, size_t tagBytes)
      : slotBytes_(slotBytes), tagBytes_(tagBytes) {}
  void takeHeaderByte(std::byte b);
  void endPiece();

  uint32_t slotBytes_;
  size_t tagBytes_;
  State state_ = State::Header;
  std::array<std::byte, sizeof(PieceHeader)> header_{};
  size_t headerBytes_ = 0;
  uint64_t payloadLeft_ = 0;
  uint64_t piecesPassed_ = 0;
  bool sawFarewell_ = false;
  std::string text_;  // the farewell's text, then its tag
};

}  // namespace mcl::transport::tcp
