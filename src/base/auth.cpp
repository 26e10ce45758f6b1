#include "base/auth.h"

#include <sodium.h>
#include <cstdint>
#include <string_view>

#include "base/error.h"

namespace mcl {

namespace {

void ensureSodium() {
  static const int status = sodium_init();
  if (status < 0) throw error(mclSystemError, "libsodium failed to initialise");
}

}  // namespace

Secret randomSecret() {
  ensureSodium();
  Secret s;
  randombytes_buf(s.data(), s.size());
  return s;
}

Nonce randomNonce() {
  ensureSodium();
  Nonce n;
  randombytes_buf(n.data(), n.size());
  return n;
}

uint64_t randomU64() {
  ensureSodium();
  uint64_t v;
  randombytes_buf(&v, sizeof(v));
  return v;
}

Mac authMac(const Secret& secret, std::string_view label, const Nonce& first,
            const Nonce& second) {
  ensureSodium();
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, secret.data(), secret.size());
  crypto_auth_hmacsha256_update(
      &state, reinterpret_cast<const unsigned char*>(label.data()),
      label.size());
  crypto_auth_hmacsha256_update(&state, first.data(), first.size());
  crypto_auth_hmacsha256_update(&state, second.data(), second.size());
  Mac mac;
  crypto_auth_hmacsha256_final(&state, mac.data());
  sodium_memzero(&state, sizeof(state));
  return mac;
}

Secret secretFromText(std::string_view text) {
  ensureSodium();
  static const char kKey[] = "mcl-derived-secret-v1";
  Secret s;
  crypto_generichash(s.data(), s.size(),
                     reinterpret_cast<const unsigned char*>(text.data()),
                     text.size(), reinterpret_cast<const unsigned char*>(kKey),
                     sizeof(kKey) - 1);
  return s;
}

bool macEqual(const Mac& a, const Mac& b) {
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace mcl
