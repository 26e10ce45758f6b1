#include "transports/tcp/farewell_scan.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace mcl::transport::tcp {

FarewellScan FarewellScan::inHeader(std::span<const std::byte> partial,
                                    uint32_t slotBytes, size_t tagBytes) {
  FarewellScan scan(slotBytes, tagBytes);
  for (std::byte b :
       partial.first(std::min(partial.size(), sizeof(PieceHeader))))
    scan.takeHeaderByte(b);
  return scan;
}

FarewellScan FarewellScan::inPayload(uint64_t payloadLeft, uint32_t slotBytes,
                                     size_t tagBytes) {
  FarewellScan scan(slotBytes, tagBytes);
  scan.state_ = State::Payload;
  scan.payloadLeft_ = payloadLeft;
  if (payloadLeft == 0) scan.endPiece();
  return scan;
}

FarewellScan FarewellScan::inFarewell(std::span<const std::byte> partial,
                                      uint32_t slotBytes, size_t tagBytes) {
  FarewellScan scan(slotBytes, tagBytes);
  scan.state_ = State::Text;
  scan.sawFarewell_ = true;
  scan.feed(partial);
  return scan;
}

void FarewellScan::takeHeaderByte(std::byte b) {
  header_[headerBytes_++] = b;
  if (headerBytes_ < header_.size()) return;
  PieceHeader header;
  std::memcpy(&header, header_.data(), sizeof(header));
  headerBytes_ = 0;
  if (header.length == kFarewellLength) {
    state_ = State::Text;
    sawFarewell_ = true;
  } else if (header.length == 0 || header.length > slotBytes_) {
    state_ = State::Done;  // out of step: whatever follows is no frame
  } else {
    state_ = State::Payload;
    payloadLeft_ = header.length + tagBytes_;
  }
}

void FarewellScan::endPiece() {
  state_ = State::Header;
  ++piecesPassed_;
}

bool FarewellScan::feed(std::span<const std::byte> bytes) {
  size_t at = 0;
  while (at < bytes.size() && state_ != State::Done) {
    switch (state_) {
      case State::Header:
        takeHeaderByte(bytes[at++]);
        break;
      case State::Payload: {
        const uint64_t skip =
            std::min<uint64_t>(payloadLeft_, bytes.size() - at);
        at += static_cast<size_t>(skip);
        payloadLeft_ -= skip;
        if (payloadLeft_ == 0) endPiece();
        break;
      }
      case State::Text: {
        const size_t frame = kFarewellTextBytes + tagBytes_;
        const size_t take = std::min(frame - text_.size(), bytes.size() - at);
        text_.append(reinterpret_cast<const char*>(bytes.data() + at), take);
        at += take;
        if (text_.size() == frame) state_ = State::Done;
        break;
      }
      case State::Done:
        break;
    }
  }
  return state_ != State::Done;
}

std::string FarewellScan::farewell() const {
  if (!sawFarewell_) return "";
  const std::string_view said =
      std::string_view(text_).substr(0, kFarewellTextBytes);
  std::string text(said.substr(0, said.find('\0')));
  return text.empty() ? "it said farewell" : text;
}

std::span<const std::byte> FarewellScan::sealedFrame() const {
  if (!sawFarewell_ || text_.size() != kFarewellTextBytes + tagBytes_)
    return {};
  return std::as_bytes(std::span(text_));
}

}  // namespace mcl::transport::tcp
