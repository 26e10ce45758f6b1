#include "transports/tcp/tcp_handshake.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "base/error.h"
#include "base/wire.h"

namespace mcl::transport::tcp {

bool StreamKey::operator<(const StreamKey& o) const {
  return std::tie(rank, channel, link, stripe) <
         std::tie(o.rank, o.channel, o.link, o.stripe);
}

Mac clientMac(const Secret& secret, const Nonce& server, const Nonce& client) {
  return authMac(secret, "mcl-tcp-client", server, client);
}

Mac serverMac(const Secret& secret, const Nonce& server, const Nonce& client) {
  return authMac(secret, "mcl-tcp-server", client, server);
}

SessionKeys streamKeys(const Secret& secret, uint64_t commId,
                       const Nonce& server, const Nonce& client,
                       bool weConnected) {
  return deriveSessionKeys(secret, "mcl tcp " + std::to_string(commId), server,
                           client, weConnected);
}

SessionKeys clientHandshake(int fd, const Secret& secret, uint64_t commId,
                            const StreamKey& key, platform::Deadline deadline) {
  Nonce server;
  platform::recvAll(fd, server.data(), server.size(), deadline);
  Nonce client = randomNonce();
  Mac proof = clientMac(secret, server, client);
  uint8_t message[kProofBytes];
  std::copy(client.begin(), client.end(), message);
  std::copy(proof.begin(), proof.end(), message + client.size());
  platform::sendAll(fd, message, sizeof(message), deadline);
  Mac answer;
  platform::recvAll(fd, answer.data(), answer.size(), deadline);
  if (!macEqual(answer, serverMac(secret, server, client)))
    throw error(mclRemoteError,
                "the TCP peer does not know this communicator's secret");
  const SessionKeys keys = streamKeys(secret, commId, server, client, true);
  std::vector<uint8_t> hello = encodeHello(keys, commId, key);
  platform::sendAll(fd, hello.data(), hello.size(), deadline);
  return keys;
}

// The hello is the first message of the connector's direction, sealed by
// a Sealer (nonce: message number 0, its last four bytes zero); pieces
// mark their nonces apart (piece_seal.cpp), so no nonce serves twice.
std::vector<uint8_t> encodeHello(const SessionKeys& keys, uint64_t commId,
                                 const StreamKey& key) {
  WireWriter w;
  w.u64(commId);
  w.i32(key.rank);
  w.u32(key.channel);
  w.u32(key.link);
  w.u32(key.stripe);
  Sealer sealer(keys.send);
  static const char kLabel[] = "mcl tcp hello";
  return sealer.seal(w.bytes(), reinterpret_cast<const uint8_t*>(kLabel),
                     sizeof(kLabel));
}

bool decodeHello(const SessionKeys& keys, const uint8_t* bytes, uint64_t commId,
                 StreamKey* key) {
  Opener opener(keys.receive);
  static const char kLabel[] = "mcl tcp hello";
  std::vector<uint8_t> plain;
  if (!opener.open(std::vector<uint8_t>(bytes, bytes + kHelloBytes),
                   reinterpret_cast<const uint8_t*>(kLabel), sizeof(kLabel),
                   &plain))
    return false;
  WireReader r(plain.data(), plain.size(), "tcp hello");
  if (r.u64() != commId) return false;
  key->rank = r.i32();
  key->channel = r.u32();
  key->link = r.u32();
  key->stripe = r.u32();
  return true;
}

namespace {
const char kVerdictLabel[] = "mcl tcp links";
constexpr uint64_t kVerdictMessage = 1;  // after the hello (message 0)
}  // namespace

std::vector<uint8_t> encodeLinkVerdict(const SessionKeys& keys, uint32_t links,
                                       uint32_t usedMask) {
  WireWriter w;
  w.u32(links);
  w.u32(usedMask);
  Sealer sealer(keys.send, kVerdictMessage);
  return sealer.seal(w.bytes(), reinterpret_cast<const uint8_t*>(kVerdictLabel),
                     sizeof(kVerdictLabel));
}

bool decodeLinkVerdict(const SessionKeys& keys, const uint8_t* bytes,
                       uint32_t links, uint32_t* usedMask) {
  Opener opener(keys.receive, kVerdictMessage);
  std::vector<uint8_t> plain;
  if (!opener.open(std::vector<uint8_t>(bytes, bytes + kLinkVerdictBytes),
                   reinterpret_cast<const uint8_t*>(kVerdictLabel),
                   sizeof(kVerdictLabel), &plain))
    return false;
  WireReader r(plain.data(), plain.size(), "tcp link verdict");
  if (r.u32() != links) return false;
  *usedMask = r.u32();
  return true;
}

}  // namespace mcl::transport::tcp
