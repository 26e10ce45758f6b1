#include "transports/tcp/tcp_handshake.h"

#include <algorithm>
#include <cstdint>
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

void clientHandshake(int fd, const Secret& secret, uint64_t commId,
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
  std::vector<uint8_t> hello = encodeHello(commId, key);
  platform::sendAll(fd, hello.data(), hello.size(), deadline);
}

std::vector<uint8_t> encodeHello(uint64_t commId, const StreamKey& key) {
  WireWriter w;
  w.u64(commId);
  w.i32(key.rank);
  w.u32(key.channel);
  w.u32(key.link);
  w.u32(key.stripe);
  return w.take();
}

bool decodeHello(const uint8_t* bytes, uint64_t commId, StreamKey* key) {
  WireReader r(bytes, kHelloBytes, "tcp hello");
  if (r.u64() != commId) return false;
  key->rank = r.i32();
  key->channel = r.u32();
  key->link = r.u32();
  key->stripe = r.u32();
  return true;
}

}  // namespace mcl::transport::tcp
