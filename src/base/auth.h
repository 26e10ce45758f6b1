// The shared secret of a unique id, and the challenge-response that proves a
// peer knows it without sending it: HMAC-SHA256 over both sides' nonces
// (libsodium). Used on every socket mcl listens on.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace mcl {

using Secret = std::array<uint8_t, 16>;
using Nonce = std::array<uint8_t, 32>;
using Mac = std::array<uint8_t, 32>;

Secret randomSecret();
Nonce randomNonce();
uint64_t randomU64();

// HMAC(secret, label || first || second). The label keeps a client's proof
// from being replayed as a server's.
Mac authMac(const Secret& secret, std::string_view label, const Nonce& first,
            const Nonce& second);

// A secret derived from text (BLAKE2b, keyed by a fixed label): the same
// text gives the same secret on every rank.
Secret secretFromText(std::string_view text);

// Constant-time comparison.
bool macEqual(const Mac& a, const Mac& b);

}  // namespace mcl
