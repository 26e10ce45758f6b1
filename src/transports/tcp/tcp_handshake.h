// How a TCP data connection proves it belongs to the communicator before it
// carries anything: the acceptor sends a nonce, the connector answers with
// HMAC(secret) over both nonces, the acceptor proves the secret back, then
// the connector says which stream this socket is, sealed with the socket's
// session keys (derived from the secret, both nonces and the communicator;
// they protect its pieces too: piece_seal.h). Fixed-size messages, so a
// stranger is dropped after at most 64 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/auth.h"
#include "base/sealed_channel.h"
#include "base/session_keys.h"
#include "platform/socket.h"

namespace mcl::transport::tcp {

// Which socket of which connection this is; both sides derive the same set.
struct StreamKey {
  int32_t rank = 0;      // the connecting rank
  uint32_t channel = 0;  // collective or point-to-point
  uint32_t link = 0;     // index into the pair's chosen links
  uint32_t stripe = 0;   // socket index within the link

  bool operator<(const StreamKey& o) const;
};

// A socket that passed the handshake, with its keys.
struct ProvenSocket {
  platform::Socket socket;
  SessionKeys keys;
};

constexpr size_t kChallengeBytes = sizeof(Nonce);
constexpr size_t kProofBytes = sizeof(Nonce) + sizeof(Mac);
constexpr size_t kServerProofBytes = sizeof(Mac);
constexpr size_t kHelloBytes = 8 + 4 * 4 + kSealOverhead;

// The connector's side, blocking until the deadline; returns the socket's
// session keys. Throws mcl::Error (mclRemoteError when the acceptor does not
// know the secret).
SessionKeys clientHandshake(int fd, const Secret& secret, uint64_t commId,
                            const StreamKey& key, platform::Deadline deadline);

// Pieces of the acceptor's side (driven by TcpListener's poll loop).
Mac clientMac(const Secret& secret, const Nonce& server, const Nonce& client);
Mac serverMac(const Secret& secret, const Nonce& server, const Nonce& client);
SessionKeys streamKeys(const Secret& secret, uint64_t commId,
                       const Nonce& server, const Nonce& client,
                       bool weConnected);
// The connector's last message (kHelloBytes): which communicator and which
// stream, sealed. Decoding reads kHelloBytes; false when it was not sealed
// with these keys or names another communicator.
std::vector<uint8_t> encodeHello(const SessionKeys& keys, uint64_t commId,
                                 const StreamKey& key);
bool decodeHello(const SessionKeys& keys, const uint8_t* bytes, uint64_t commId,
                 StreamKey* key);

// Once it has tried every link of a pair, the connector tells the acceptor
// which links the pair uses (a bit per link: one it could not connect
// over is dropped), on the first socket of each link of the first channel,
// as that direction's second sealed message. Decoding reads
// kLinkVerdictBytes; false when it was not sealed with these keys as that
// message, or names another number of links.
constexpr size_t kLinkVerdictBytes = 4 + 4 + kSealOverhead;
std::vector<uint8_t> encodeLinkVerdict(const SessionKeys& keys, uint32_t links,
                                       uint32_t usedMask);
bool decodeLinkVerdict(const SessionKeys& keys, const uint8_t* bytes,
                       uint32_t links, uint32_t* usedMask);

}  // namespace mcl::transport::tcp
