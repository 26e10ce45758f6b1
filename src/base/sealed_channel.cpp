#include "base/sealed_channel.h"

#include <sodium.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/error.h"

namespace mcl {

namespace {

using AeadNonce =
    std::array<uint8_t, crypto_aead_chacha20poly1305_IETF_NPUBBYTES>;

// The message number, little-endian, in the nonce's first 8 bytes. Keys
// are per connection and direction, so a number never repeats under a key.
AeadNonce nonceFor(uint64_t number) {
  AeadNonce nonce{};
  for (size_t i = 0; i < 8; ++i)
    nonce[i] = static_cast<uint8_t>(number >> (8 * i));
  return nonce;
}

// The AEAD itself, message `number` under key.
std::vector<uint8_t> sealAt(const SessionKey& key, uint64_t number,
                            const std::vector<uint8_t>& plain,
                            const uint8_t* header, size_t headerBytes) {
  std::vector<uint8_t> sealed(plain.size() + kSealOverhead);
  unsigned long long length = 0;
  const AeadNonce nonce = nonceFor(number);
  crypto_aead_chacha20poly1305_ietf_encrypt(
      sealed.data(), &length, plain.data(), plain.size(), header, headerBytes,
      nullptr, nonce.data(), key.data());
  sealed.resize(static_cast<size_t>(length));
  return sealed;
}

bool openAt(const SessionKey& key, uint64_t number,
            const std::vector<uint8_t>& sealed, const uint8_t* header,
            size_t headerBytes, std::vector<uint8_t>* plain) {
  if (sealed.size() < kSealOverhead) return false;
  plain->resize(sealed.size() - kSealOverhead);
  unsigned long long length = 0;
  const AeadNonce nonce = nonceFor(number);
  if (crypto_aead_chacha20poly1305_ietf_decrypt(
          plain->data(), &length, nullptr, sealed.data(), sealed.size(), header,
          headerBytes, nonce.data(), key.data()) != 0) {
    plain->clear();
    return false;
  }
  plain->resize(static_cast<size_t>(length));
  return true;
}

}  // namespace

Sealer::~Sealer() { sodium_memzero(key_.data(), key_.size()); }

Opener::~Opener() { sodium_memzero(key_.data(), key_.size()); }

std::vector<uint8_t> Sealer::seal(const std::vector<uint8_t>& plain,
                                  const uint8_t* header, size_t headerBytes) {
  if (sent_ == UINT64_MAX)
    throw error(mclInternalError,
                "a sealed channel ran out of message numbers");
  return sealAt(key_, sent_++, plain, header, headerBytes);
}

bool Opener::open(const std::vector<uint8_t>& sealed, const uint8_t* header,
                  size_t headerBytes, std::vector<uint8_t>* plain) {
  if (!openAt(key_, received_, sealed, header, headerBytes, plain))
    return false;
  ++received_;
  return true;
}

std::vector<uint8_t> sealNumbered(const SessionKey& key, uint64_t number,
                                  const std::vector<uint8_t>& plain,
                                  const uint8_t* header, size_t headerBytes) {
  return sealAt(key, number, plain, header, headerBytes);
}

bool openNumbered(const SessionKey& key, uint64_t number, uint64_t* last,
                  const std::vector<uint8_t>& sealed, const uint8_t* header,
                  size_t headerBytes, std::vector<uint8_t>* plain) {
  if (number <= *last ||
      !openAt(key, number, sealed, header, headerBytes, plain))
    return false;
  *last = number;
  return true;
}

}  // namespace mcl
