#include "base/session_keys.h"

#include <sodium.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/error.h"

namespace mcl {

namespace {

void update(crypto_generichash_state& state, std::string_view text) {
  // Length first, so ("ab","c") and ("a","bc") hash differently.
  const uint64_t length = text.size();
  crypto_generichash_update(
      &state, reinterpret_cast<const unsigned char*>(&length), sizeof(length));
  crypto_generichash_update(
      &state, reinterpret_cast<const unsigned char*>(text.data()), text.size());
}

// BLAKE2b keyed by the secret over a label, the context and both nonces.
template <size_t N>
std::array<uint8_t, N> keyedHash(const Secret& secret, std::string_view label,
                                 std::string_view context, const Nonce* first,
                                 const Nonce* second) {
  if (sodium_init() < 0)
    throw error(mclSystemError, "libsodium failed to initialise");
  crypto_generichash_state state;
  crypto_generichash_init(&state, secret.data(), secret.size(), N);
  update(state, label);
  update(state, context);
  if (first != nullptr)
    crypto_generichash_update(&state, first->data(), first->size());
  if (second != nullptr)
    crypto_generichash_update(&state, second->data(), second->size());
  std::array<uint8_t, N> out{};
  crypto_generichash_final(&state, out.data(), N);
  sodium_memzero(&state, sizeof(state));
  return out;
}

}  // namespace

SessionKeys deriveSessionKeys(const Secret& secret, std::string_view context,
                              const Nonce& acceptorNonce,
                              const Nonce& connectorNonce, bool weConnected) {
  const SessionKey toAcceptor =
      keyedHash<32>(secret, "mcl-session-v1 to acceptor", context,
                    &acceptorNonce, &connectorNonce);
  const SessionKey toConnector =
      keyedHash<32>(secret, "mcl-session-v1 to connector", context,
                    &acceptorNonce, &connectorNonce);
  SessionKeys keys;
  keys.send = weConnected ? toAcceptor : toConnector;
  keys.receive = weConnected ? toConnector : toAcceptor;
  return keys;
}

Secret deriveChildSecret(const Secret& parent, std::string_view context) {
  return keyedHash<sizeof(Secret)>(parent, "mcl-child-secret-v1", context,
                                   nullptr, nullptr);
}

}  // namespace mcl
