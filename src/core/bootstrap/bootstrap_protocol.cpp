#include "core/bootstrap/bootstrap_protocol.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/wire.h"

namespace mcl {

namespace {

constexpr size_t kHeaderBytes = 8;

void putHeader(uint8_t* h, FrameType type, size_t length) {
  WireWriter w;
  w.u32(static_cast<uint32_t>(type));
  w.u32(static_cast<uint32_t>(length));
  std::copy(w.bytes().begin(), w.bytes().end(), h);
}

Frame parseHeader(const uint8_t* h, uint32_t* length) {
  WireReader r(h, kHeaderBytes, "bootstrap frame header");
  Frame f;
  uint32_t type = r.u32();
  *length = r.u32();
  if (type < static_cast<uint32_t>(FrameType::Challenge) ||
      type > static_cast<uint32_t>(FrameType::Sealed))
    throw error(mclRemoteError, "bootstrap frame of unknown type %u", type);
  if (*length > kMaxFrameBytes)
    throw error(mclRemoteError, "bootstrap frame of %u bytes exceeds %u",
                *length, kMaxFrameBytes);
  f.type = static_cast<FrameType>(type);
  return f;
}

}  // namespace

const char* frameTypeName(FrameType type) {
  switch (type) {
    case FrameType::Challenge:
      return "Challenge";
    case FrameType::AuthProof:
      return "AuthProof";
    case FrameType::AuthOk:
      return "AuthOk";
    case FrameType::Hello:
      return "Hello";
    case FrameType::Welcome:
      return "Welcome";
    case FrameType::Failure:
      return "Failure";
    case FrameType::AllGather:
      return "AllGather";
    case FrameType::AllGatherResult:
      return "AllGatherResult";
    case FrameType::Bye:
      return "Bye";
    case FrameType::Rejected:
      return "Rejected";
    case FrameType::Sealed:
      return "Sealed";
  }
  return "unknown";
}

void sendFrame(int fd, FrameType type, const std::vector<uint8_t>& payload,
               platform::Deadline deadline) {
  uint8_t header[kHeaderBytes];
  putHeader(header, type, payload.size());
  platform::sendAll(fd, header, sizeof(header), deadline);
  if (!payload.empty())
    platform::sendAll(fd, payload.data(), payload.size(), deadline);
}

Frame recvFrame(int fd, platform::Deadline deadline) {
  uint8_t header[kHeaderBytes];
  platform::recvAll(fd, header, sizeof(header), deadline);
  uint32_t length = 0;
  Frame f = parseHeader(header, &length);
  f.payload.resize(length);
  if (length > 0) platform::recvAll(fd, f.payload.data(), length, deadline);
  return f;
}

bool takeFrame(std::vector<uint8_t>& buffer, Frame* out) {
  if (buffer.size() < kHeaderBytes) return false;
  uint32_t length = 0;
  Frame f = parseHeader(buffer.data(), &length);
  if (buffer.size() < kHeaderBytes + length) return false;
  f.payload.assign(buffer.begin() + kHeaderBytes,
                   buffer.begin() + kHeaderBytes + length);
  buffer.erase(buffer.begin(), buffer.begin() + kHeaderBytes + length);
  *out = std::move(f);
  return true;
}

SessionKeys rendezvousKeys(const Secret& secret, const Nonce& rootNonce,
                           const Nonce& rankNonce, bool weAreTheRank) {
  return deriveSessionKeys(secret, "mcl rendezvous", rootNonce, rankNonce,
                           weAreTheRank);
}

void sendSealedFrame(int fd, Sealer& sealer, FrameType type,
                     const std::vector<uint8_t>& payload,
                     platform::Deadline deadline) {
  WireWriter inner;
  inner.u32(static_cast<uint32_t>(type));
  inner.raw(payload.data(), payload.size());
  uint8_t header[kHeaderBytes];
  putHeader(header, FrameType::Sealed, inner.bytes().size() + kSealOverhead);
  std::vector<uint8_t> sealed =
      sealer.seal(inner.bytes(), header, sizeof(header));
  platform::sendAll(fd, header, sizeof(header), deadline);
  platform::sendAll(fd, sealed.data(), sealed.size(), deadline);
}

Frame openSealedFrame(Opener& opener, const Frame& sealed,
                      const std::string& peer) {
  if (sealed.type != FrameType::Sealed)
    throw error(mclRemoteError,
                "%s sent a %s frame in the clear after the handshake: it "
                "runs an mcl older than this one (bootstrap protocol 1, "
                "which seals nothing; this one speaks %u: install the same "
                "mcl on every host), or something on the path is injecting "
                "frames",
                peer.c_str(), frameTypeName(sealed.type), kBootstrapProtocol);
  uint8_t header[kHeaderBytes];
  putHeader(header, FrameType::Sealed, sealed.payload.size());
  std::vector<uint8_t> plain;
  if (!opener.open(sealed.payload, header, sizeof(header), &plain))
    throw error(mclRemoteError,
                "integrity check failed on a message from %s: it was altered, "
                "replayed or forged on the way (not sealed with this "
                "connection's key)",
                peer.c_str());
  WireReader r(plain.data(), plain.size(), "sealed frame");
  const uint32_t type = r.u32();
  if (type < static_cast<uint32_t>(FrameType::Hello) ||
      type > static_cast<uint32_t>(FrameType::Bye))
    throw error(mclRemoteError, "%s sealed a frame of unknown type %u",
                peer.c_str(), type);
  Frame f;
  f.type = static_cast<FrameType>(type);
  f.payload.assign(plain.begin() + 4, plain.end());
  return f;
}

std::vector<uint8_t> encode(const AuthProof& m) {
  WireWriter w;
  w.raw(m.nonce.data(), m.nonce.size());
  w.raw(m.mac.data(), m.mac.size());
  return w.take();
}

AuthProof decodeAuthProof(const std::vector<uint8_t>& payload) {
  WireReader r(payload.data(), payload.size(), "AuthProof");
  AuthProof m;
  r.raw(m.nonce.data(), m.nonce.size());
  r.raw(m.mac.data(), m.mac.size());
  r.finish();
  return m;
}

std::vector<uint8_t> encode(const Hello& m) {
  WireWriter w;
  w.u32(m.protocol);
  w.i32(m.rank);
  w.i32(m.nranks);
  w.u32(m.pid);
  w.u32(m.timeoutMs);
  w.str(m.hostId);
  w.str(m.hostName);
  w.u64(m.shmFreeBytes);
  return w.take();
}

Hello decodeHello(const std::vector<uint8_t>& payload) {
  WireReader r(payload.data(), payload.size(), "Hello");
  Hello m;
  m.protocol = r.u32();
  m.rank = r.i32();
  m.nranks = r.i32();
  m.pid = r.u32();
  m.timeoutMs = r.u32();
  m.hostId = r.str(kMaxHostText);
  m.hostName = r.str(kMaxHostText);
  m.shmFreeBytes = r.u64();
  r.finish();
  // The root sizes its table of ranks from the first Hello: a size no
  // communicator can have is refused before anything is allocated for it.
  if (m.nranks < 1 || static_cast<uint32_t>(m.nranks) > kMaxRanks ||
      m.rank < 0 || m.rank >= m.nranks)
    throw error(mclRemoteError, "Hello: rank %d of %d is out of range", m.rank,
                m.nranks);
  return m;
}

std::vector<uint8_t> encode(const Welcome& m) {
  WireWriter w;
  w.u64(m.commId);
  w.u32(static_cast<uint32_t>(m.peers.size()));
  for (const auto& p : m.peers) {
    w.str(p.hostId);
    w.str(p.hostName);
    w.u32(p.pid);
    w.u64(p.shmFreeBytes);
  }
  return w.take();
}

Welcome decodeWelcome(const std::vector<uint8_t>& payload) {
  WireReader r(payload.data(), payload.size(), "Welcome");
  Welcome m;
  m.commId = r.u64();
  uint32_t n = r.u32();
  // Each entry takes at least 20 bytes: refuse counts the payload cannot
  // hold before allocating for them.
  if (n == 0 || n > kMaxRanks || n > r.remaining() / 20)
    throw error(mclRemoteError, "malformed Welcome: %u ranks", n);
  m.peers.resize(n);
  for (auto& p : m.peers) {
    p.hostId = r.str(kMaxHostText);
    p.hostName = r.str(kMaxHostText);
    p.pid = r.u32();
    p.shmFreeBytes = r.u64();
  }
  r.finish();
  return m;
}

std::vector<uint8_t> encode(const Failure& m) {
  WireWriter w;
  w.i32(m.code);
  w.str(m.message);
  return w.take();
}

mclResult_t failureResult(int32_t code) {
  return code > mclSuccess && code < mclNumResults
             ? static_cast<mclResult_t>(code)
             : mclRemoteError;
}

Failure decodeFailure(const std::vector<uint8_t>& payload) {
  WireReader r(payload.data(), payload.size(), "Failure");
  Failure m;
  m.code = r.i32();
  m.message = r.str(4096);
  r.finish();
  return m;
}

std::vector<uint8_t> encode(const AllGatherMessage& m) {
  WireWriter w;
  w.u32(m.round);
  w.u32(static_cast<uint32_t>(m.parts.size()));
  for (const auto& p : m.parts) w.blob(p.data(), p.size());
  return w.take();
}

AllGatherMessage decodeAllGather(const std::vector<uint8_t>& payload) {
  WireReader r(payload.data(), payload.size(), "AllGather");
  AllGatherMessage m;
  m.round = r.u32();
  uint32_t n = r.u32();
  if (n > kMaxRanks || n > r.remaining() / 4)
    throw error(mclRemoteError, "malformed AllGather: %u parts", n);
  m.parts.resize(n);
  for (auto& p : m.parts) p = r.blob(kMaxAllGatherBytes);
  r.finish();
  return m;
}

}  // namespace mcl
