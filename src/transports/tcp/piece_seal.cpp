#include "transports/tcp/piece_seal.h"

#include <sodium.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mcl::transport::tcp {

namespace {

constexpr size_t kHeaderBytes = 8;
using PieceNonce =
    std::array<uint8_t, crypto_aead_chacha20poly1305_IETF_NPUBBYTES>;

// The piece's index, what the frame is (a farewell or a move can never
// pass for the data piece it stands beside), and a mark no Sealer's nonce
// has (the hello was sealed under the same key: tcp_handshake.cpp).
PieceNonce pieceNonce(uint64_t index, SealedFrame frame) {
  PieceNonce nonce{};
  for (size_t i = 0; i < 8; ++i)
    nonce[i] = static_cast<uint8_t>(index >> (8 * i));
  nonce[8] = static_cast<uint8_t>(frame);
  nonce[11] = 'P';
  return nonce;
}

}  // namespace

static_assert(crypto_aead_aes256gcm_NPUBBYTES ==
              crypto_aead_chacha20poly1305_IETF_NPUBBYTES);
static_assert(crypto_aead_aes256gcm_ABYTES == kPieceTagBytes);

bool aesGcmAvailable() {
  return sodium_init() >= 0 && crypto_aead_aes256gcm_is_available() != 0;
}

const char* pieceCipherName(PieceCipher cipher) {
  return cipher == PieceCipher::Aes256Gcm ? "AES-256-GCM" : "ChaCha20-Poly1305";
}

PieceSeal::PieceSeal(const SessionKeys& keys, WireProtect mode,
                     PieceCipher cipher)
    : keys_(keys), mode_(mode), cipher_(cipher) {}

PieceSeal::~PieceSeal() { sodium_memzero(&keys_, sizeof(keys_)); }

PieceTag PieceSeal::seal(uint64_t index, SealedFrame frame, const void* header,
                         const void* in, void* out, size_t bytes) const {
  const PieceNonce nonce = pieceNonce(index, frame);
  PieceTag tag{};
  unsigned long long tagBytes = 0;
  const auto* h = static_cast<const unsigned char*>(header);
  if (mode_ == WireProtect::Encrypt && cipher_ == PieceCipher::Aes256Gcm) {
    crypto_aead_aes256gcm_encrypt_detached(
        static_cast<unsigned char*>(out), tag.data(), &tagBytes,
        static_cast<const unsigned char*>(in), bytes, h, kHeaderBytes, nullptr,
        nonce.data(), keys_.send.data());
    return tag;
  }
  if (mode_ == WireProtect::Encrypt) {
    crypto_aead_chacha20poly1305_ietf_encrypt_detached(
        static_cast<unsigned char*>(out), tag.data(), &tagBytes,
        static_cast<const unsigned char*>(in), bytes, h, kHeaderBytes, nullptr,
        nonce.data(), keys_.send.data());
    return tag;
  }
  // Mac: the payload is authenticated, not encrypted. The header is bound
  // through the nonce's key stream: it is the message, the payload the
  // associated data.
  unsigned char sealedHeader[kHeaderBytes];
  crypto_aead_chacha20poly1305_ietf_encrypt_detached(
      sealedHeader, tag.data(), &tagBytes, h, kHeaderBytes,
      static_cast<const unsigned char*>(in), bytes, nullptr, nonce.data(),
      keys_.send.data());
  if (out != in && bytes > 0) memcpy(out, in, bytes);
  return tag;
}

bool PieceSeal::open(uint64_t index, SealedFrame frame, const void* header,
                     void* payload, size_t bytes, const PieceTag& tag) const {
  const PieceNonce nonce = pieceNonce(index, frame);
  const auto* h = static_cast<const unsigned char*>(header);
  auto* p = static_cast<unsigned char*>(payload);
  if (mode_ == WireProtect::Encrypt)
    return decrypt(nonce.data(), h, p, bytes, tag, keys_.receive.data());
  // Mac: recompute the header's sealing with the payload as associated
  // data, and compare tags in constant time.
  unsigned char sealedHeader[kHeaderBytes];
  PieceTag expected{};
  unsigned long long tagBytes = 0;
  crypto_aead_chacha20poly1305_ietf_encrypt_detached(
      sealedHeader, expected.data(), &tagBytes, h, kHeaderBytes, p, bytes,
      nullptr, nonce.data(), keys_.receive.data());
  return sodium_memcmp(expected.data(), tag.data(), tag.size()) == 0;
}

bool PieceSeal::unseal(uint64_t index, const void* header, void* payload,
                       size_t bytes, const PieceTag& tag) const {
  if (mode_ != WireProtect::Encrypt) return true;  // never changed
  const PieceNonce nonce = pieceNonce(index, SealedFrame::Piece);
  return decrypt(nonce.data(), static_cast<const unsigned char*>(header),
                 static_cast<unsigned char*>(payload), bytes, tag,
                 keys_.send.data());
}

bool PieceSeal::decrypt(const unsigned char* nonce, const unsigned char* header,
                        unsigned char* payload, size_t bytes,
                        const PieceTag& tag, const unsigned char* key) const {
  if (cipher_ == PieceCipher::Aes256Gcm)
    return crypto_aead_aes256gcm_decrypt_detached(
               payload, nullptr, payload, bytes, tag.data(), header,
               kHeaderBytes, nonce, key) == 0;
  return crypto_aead_chacha20poly1305_ietf_decrypt_detached(
             payload, nullptr, payload, bytes, tag.data(), header, kHeaderBytes,
             nonce, key) == 0;
}

}  // namespace mcl::transport::tcp
