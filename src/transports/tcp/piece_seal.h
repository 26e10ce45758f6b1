// The protection of one TCP socket's pieces, each direction under its own
// session key from the socket's handshake (libsodium: AES-256-GCM where
// every rank's CPU has the instructions for it, else ChaCha20-Poly1305;
// authentication alone is Poly1305's).
// The nonce is the piece's index, which the two ends count alike, so a
// piece altered, dropped, repeated or moved fails its check. Under Mac the
// payload travels as is with a tag; under Encrypt it is encrypted too.
// The piece header stays in the clear and is authenticated with it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "base/session_keys.h"
#include "transports/tcp/wire_protect.h"

namespace mcl::transport::tcp {

constexpr size_t kPieceTagBytes = 16;
using PieceTag = std::array<uint8_t, kPieceTagBytes>;

enum class PieceCipher { ChaCha20Poly1305, Aes256Gcm };

// What a sealed frame is, part of its nonce: a data piece, a farewell, or
// a move (tcp_connection.h: a lost stripe's pieces go on another socket).
enum class SealedFrame : uint8_t { Piece = 0, Farewell = 1, Move = 2 };
// Whether this CPU runs AES-256-GCM in hardware (libsodium's check): the
// ranks use it only when all of theirs do.
bool aesGcmAvailable();
const char* pieceCipherName(PieceCipher cipher);

class PieceSeal {
 public:
  // mode: Mac or Encrypt; cipher: what Encrypt uses.
  PieceSeal(const SessionKeys& keys, WireProtect mode, PieceCipher cipher);
  ~PieceSeal();
  PieceSeal(const PieceSeal&) = delete;
  PieceSeal& operator=(const PieceSeal&) = delete;

  WireProtect mode() const { return mode_; }

  // Seals frame `index` of its kind: header is its 8-byte header; the
  // payload (bytes long) is read from `in` and, under Encrypt, written
  // encrypted to `out` (which may be `in`).
  PieceTag seal(uint64_t index, SealedFrame frame, const void* header,
                const void* in, void* out, size_t bytes) const;
  // The receiving side: checks the tag and, under Encrypt, decrypts in
  // place. False when the frame was not sealed by the peer as this one.
  bool open(uint64_t index, SealedFrame frame, const void* header,
            void* payload, size_t bytes, const PieceTag& tag) const;
  // The sending side undone: a data piece this end sealed (in place, with
  // tag) decrypted back, to go again on another socket under its keys.
  // Under Mac the payload was never changed.
  bool unseal(uint64_t index, const void* header, void* payload, size_t bytes,
              const PieceTag& tag) const;

 private:
  bool decrypt(const unsigned char* nonce, const unsigned char* header,
               unsigned char* payload, size_t bytes, const PieceTag& tag,
               const unsigned char* key) const;

  SessionKeys keys_;
  WireProtect mode_;
  PieceCipher cipher_;
};

}  // namespace mcl::transport::tcp
