#include "core/liveness/watch_wire.h"

#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "base/auth.h"
#include "base/sealed_channel.h"
#include "base/session_keys.h"
#include "base/wire.h"

namespace mcl::watch_wire {

std::vector<uint8_t> encodeHello(const Hello& h) {
  WireWriter w;
  w.u32(h.magic);
  w.u64(h.commId);
  w.u32(h.from);
  w.u32(h.to);
  w.raw(h.nonce.data(), h.nonce.size());
  return w.take();
}

Hello decodeHello(const std::vector<uint8_t>& bytes) {
  WireReader in(bytes.data(), bytes.size(), "side-channel hello");
  Hello h;
  h.magic = in.u32();
  h.commId = in.u64();
  h.from = in.u32();
  h.to = in.u32();
  in.raw(h.nonce.data(), h.nonce.size());
  in.finish();
  return h;
}

std::string proofLabel(const char* role, uint64_t commId, int low, int high) {
  char text[96];
  snprintf(text, sizeof(text), "mcl-watch-%s %016" PRIx64 " %d %d", role,
           commId, low, high);
  return text;
}

std::vector<uint8_t> sealFrame(const SessionKey& key, uint64_t number,
                               const std::string& message) {
  const std::vector<uint8_t> plain(message.begin(), message.end());
  WireWriter header;
  header.u32(static_cast<uint32_t>(plain.size() + kSealOverhead));
  header.u64(number);
  const std::vector<uint8_t> sealed = sealNumbered(
      key, number, plain, header.bytes().data(), kFrameHeaderBytes);
  std::vector<uint8_t> frame = header.take();
  frame.insert(frame.end(), sealed.begin(), sealed.end());
  return frame;
}

FrameRead openFrame(const std::string& inbox, size_t at, const SessionKey& key,
                    uint64_t* lastReceived, std::string* message,
                    size_t* used) {
  if (inbox.size() - at < kFrameHeaderBytes) return FrameRead::Incomplete;
  const auto* bytes = reinterpret_cast<const uint8_t*>(inbox.data()) + at;
  WireReader header(bytes, kFrameHeaderBytes, "side-channel frame");
  const uint32_t length = header.u32();
  const uint64_t number = header.u64();
  if (length > kMaxSealedBytes || length < kSealOverhead)
    return FrameRead::NotOurs;
  if (inbox.size() - at - kFrameHeaderBytes < length)
    return FrameRead::Incomplete;
  std::vector<uint8_t> plain;
  if (!openNumbered(key, number, lastReceived,
                    std::vector<uint8_t>(bytes + kFrameHeaderBytes,
                                         bytes + kFrameHeaderBytes + length),
                    bytes, kFrameHeaderBytes, &plain))
    return FrameRead::Forged;
  message->assign(plain.begin(), plain.end());
  *used = kFrameHeaderBytes + length;
  return FrameRead::Message;
}

std::string reasonMessage(char kind, const std::string& reason) {
  const std::string text = reason.substr(0, kMaxReasonBytes);
  std::string message(1, kind);
  message += char(text.size() >> 8);
  message += char(text.size() & 0xff);
  return message + text;
}

bool parseMessage(const std::string& bytes, Message* out) {
  if (bytes.empty()) return false;
  out->kind = bytes[0];
  if (out->kind == kBeat || out->kind == kFarewell) return bytes.size() == 1;
  if (out->kind != kGaveUp && out->kind != kGoodbye) return false;
  if (bytes.size() < 3) return false;
  const size_t length = size_t(uint8_t(bytes[1])) << 8 | uint8_t(bytes[2]);
  if (bytes.size() != 3 + length || length > kMaxReasonBytes) return false;
  out->reason = bytes.substr(3);
  return true;
}

}  // namespace mcl::watch_wire
