// The messages ranks and the rendezvous root exchange while a communicator is
// built, and their framing: u32 type, u32 length, payload.
//
//   root -> rank   Challenge {nonce_r}
//   rank -> root   AuthProof {nonce_c, HMAC(secret, "client", ...)}
//   root -> rank   AuthOk    {HMAC(secret, "server", ...)}
//                  (or Rejected {}, when the proof was wrong: no text, the
//                  root has not proven itself to this rank)
//
// From there on every frame is Sealed: its payload is the frame below
// (u32 type, then payload) encrypted and authenticated with the
// connection's session keys (base/session_keys.h), so the messages that
// follow are neither readable nor alterable on the way.
//   rank -> root   Hello     {rank, nranks, pid, timeout, host id, name,
//                             room in /dev/shm}
//   root -> ranks  Welcome   {communicator id, every rank's host, pid, room}
//   rank -> root   AllGather {round, bytes}
//   root -> ranks  AllGatherResult {round, every rank's bytes}
//   rank -> root   Bye
//   root -> ranks  Failure   {result code, message} when init fails
//   rank -> root   Failure   {result code, message} when this rank's init
//                            fails: the root tells every rank why
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <mcl/mcl.h>

#include "base/auth.h"
#include "base/sealed_channel.h"
#include "base/session_keys.h"
#include "platform/socket.h"

namespace mcl {

// 2: everything after the handshake is sealed (session keys).
constexpr uint32_t kBootstrapProtocol = 2;
constexpr uint32_t kMaxFrameBytes = 64u << 20;
constexpr uint32_t kMaxAllGatherBytes = 1u << 20;  // per rank and round
constexpr size_t kMaxHostText = 256;
// The most ranks a communicator may have (what a Welcome can list).
constexpr uint32_t kMaxRanks = 1u << 16;
constexpr uint64_t kRoomUnknown = UINT64_MAX;

enum class FrameType : uint32_t {
  Challenge = 1,
  AuthProof = 2,
  AuthOk = 3,
  Hello = 4,
  Welcome = 5,
  Failure = 6,
  AllGather = 7,
  AllGatherResult = 8,
  Bye = 9,
  Rejected = 10,
  Sealed = 11,
};
const char* frameTypeName(FrameType type);

struct Frame {
  FrameType type{};
  std::vector<uint8_t> payload;
};

void sendFrame(int fd, FrameType type, const std::vector<uint8_t>& payload,
               platform::Deadline deadline);
Frame recvFrame(int fd, platform::Deadline deadline);
// For non-blocking readers: moves one complete frame out of buffer, if any.
bool takeFrame(std::vector<uint8_t>& buffer, Frame* out);

// The session keys of a rendezvous connection, as the root or as a rank.
SessionKeys rendezvousKeys(const Secret& secret, const Nonce& rootNonce,
                           const Nonce& rankNonce, bool weAreTheRank);

// A frame sealed for the peer, and the frame a Sealed frame holds. open
// throws mclRemoteError naming `peer` when the frame was altered, replayed
// or not sealed with this connection's key.
void sendSealedFrame(int fd, Sealer& sealer, FrameType type,
                     const std::vector<uint8_t>& payload,
                     platform::Deadline deadline);
Frame openSealedFrame(Opener& opener, const Frame& sealed,
                      const std::string& peer);

struct AuthProof {
  Nonce nonce{};
  Mac mac{};
};
std::vector<uint8_t> encode(const AuthProof& m);
AuthProof decodeAuthProof(const std::vector<uint8_t>& payload);

struct Hello {
  uint32_t protocol = kBootstrapProtocol;
  int32_t rank = -1;
  int32_t nranks = 0;
  uint32_t pid = 0;
  uint32_t timeoutMs = 0;  // how long this rank will wait for the others
  std::string hostId;
  std::string hostName;
  // Free bytes for shared memory where this rank runs (Linux: /dev/shm),
  // seen before any rank of the communicator took some; kRoomUnknown where
  // nothing bounds it (macOS).
  uint64_t shmFreeBytes = kRoomUnknown;
};
std::vector<uint8_t> encode(const Hello& m);
Hello decodeHello(const std::vector<uint8_t>& payload);

struct PeerInfo {
  std::string hostId;
  std::string hostName;
  uint32_t pid = 0;
  uint64_t shmFreeBytes = kRoomUnknown;  // from its Hello
};
struct Welcome {
  uint64_t commId = 0;
  std::vector<PeerInfo> peers;
};
std::vector<uint8_t> encode(const Welcome& m);
Welcome decodeWelcome(const std::vector<uint8_t>& payload);

struct Failure {
  int32_t code = 0;
  std::string message;
};
std::vector<uint8_t> encode(const Failure& m);
// A Failure's code as a result: one that is not an error code (outside
// input) reads as mclRemoteError.
mclResult_t failureResult(int32_t code);
Failure decodeFailure(const std::vector<uint8_t>& payload);

struct AllGatherMessage {
  uint32_t round = 0;
  std::vector<std::vector<uint8_t>> parts;  // one from a rank; all from root
};
std::vector<uint8_t> encode(const AllGatherMessage& m);
AllGatherMessage decodeAllGather(const std::vector<uint8_t>& payload);

}  // namespace mcl
