// Keys for one authenticated connection. Both ends derive them from what the
// handshake proved (the secret and both fresh nonces) and from labels that
// name the connection, so no key is ever sent, none serves two connections,
// and each direction has its own (a message cannot be reflected back to its
// sender as if it were the peer's).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "base/auth.h"

namespace mcl {

using SessionKey = std::array<uint8_t, 32>;

struct SessionKeys {
  SessionKey send{};
  SessionKey receive{};
};

// context names the connection ("rendezvous", a TCP stream with its
// communicator and ranks, ...); both ends must pass the same text. The end
// that accepted the connection sent acceptorNonce.
SessionKeys deriveSessionKeys(const Secret& secret, std::string_view context,
                              const Nonce& acceptorNonce,
                              const Nonce& connectorNonce, bool weConnected);

// A secret for a communicator made from another (a split): every member
// derives it from the parent's secret and what they agreed on, so it never
// travels.
Secret deriveChildSecret(const Secret& parent, std::string_view context);

}  // namespace mcl
