// The side channel's wire (core/liveness/): what the peer watch sends and
// takes, apart from what it decides on hearing it (peer_watch.cpp).
//
// A connection opens with the connecting rank's hello and each rank's proof
// of the job's secret over both nonces; from then on every message travels
// in a sealed, numbered frame:
//   u32 length of what follows the header, u64 number (both authenticated,
//   in the clear), the message sealed with the connection's key.
// A message is one byte of kind, then for a farewell with a reason a u16
// length (big-endian) and the reason's text.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/auth.h"
#include "base/sealed_channel.h"
#include "base/session_keys.h"

namespace mcl::watch_wire {

#if defined(MSG_NOSIGNAL)
constexpr int kSendFlags = MSG_NOSIGNAL;
#else
constexpr int kSendFlags = 0;  // SO_NOSIGPIPE is set on every socket instead
#endif

// The kinds of message.
constexpr char kBeat = 'B';      // alive
constexpr char kFarewell = 'F';  // the communicator is destroyed
constexpr char kGaveUp = 'G';    // an operation failed: the reason follows
constexpr char kGoodbye = 'L';   // as kGaveUp, from a rank that finished
constexpr size_t kMaxReasonBytes = 1024;
constexpr size_t kFrameHeaderBytes = 12;
constexpr size_t kMaxSealedBytes = 3 + kMaxReasonBytes + kSealOverhead;

constexpr uint32_t kHelloMagic = 0x4d434c57;  // "MCLW"
struct Hello {
  uint32_t magic = kHelloMagic;
  uint64_t commId = 0;
  uint32_t from = 0;
  uint32_t to = 0;
  Nonce nonce{};
};
constexpr size_t kHelloBytes = 4 + 8 + 4 + 4 + 32;
std::vector<uint8_t> encodeHello(const Hello& h);
// Throws mclRemoteError for bytes that are not a hello.
Hello decodeHello(const std::vector<uint8_t>& bytes);

// The label both proofs and the session keys are bound to: this
// communicator and this pair (low connects to high), so a proof for one pair
// or job cannot be replayed for another. role: "accept", "connect",
// "session".
std::string proofLabel(const char* role, uint64_t commId, int low, int high);

// The whole frame of `message`, number `number` under `key`.
std::vector<uint8_t> sealFrame(const SessionKey& key, uint64_t number,
                               const std::string& message);

enum class FrameRead {
  Message,     // *message holds it; *used bytes of the inbox are spent
  Incomplete,  // the frame's bytes have not all come
  NotOurs,     // a length no frame has: not the side channel's bytes
  Forged,      // failed its integrity check, or a number already taken
};
// The frame at `at` of `inbox`; *lastReceived: the highest number taken
// (raised on a Message).
FrameRead openFrame(const std::string& inbox, size_t at, const SessionKey& key,
                    uint64_t* lastReceived, std::string* message, size_t* used);

// A farewell with its reason (kGaveUp, kGoodbye), the reason cut to
// kMaxReasonBytes.
std::string reasonMessage(char kind, const std::string& reason);

struct Message {
  char kind = 0;
  std::string reason;  // of kGaveUp and kGoodbye
};
// False for bytes that are no message.
bool parseMessage(const std::string& bytes, Message* out);

}  // namespace mcl::watch_wire
