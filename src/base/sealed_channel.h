// Authenticated encryption over one direction of a connection
// (ChaCha20-Poly1305, libsodium). Each end numbers the messages it sends and
// the number is the nonce, so a message altered, dropped, repeated or
// reordered on the way fails to open: the receiver never acts on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/session_keys.h"

namespace mcl {

constexpr size_t kSealOverhead = 16;  // the tag each sealed message carries

class Sealer {
 public:
  // firstNumber: the number of the first message this one seals, where the
  // direction's earlier messages were sealed by another Sealer (the TCP
  // hello, then the link verdict): never a number already used.
  explicit Sealer(const SessionKey& key, uint64_t firstNumber = 0)
      : key_(key), sent_(firstNumber) {}
  ~Sealer();
  Sealer(const Sealer&) = delete;
  Sealer& operator=(const Sealer&) = delete;

  // plain encrypted, then its tag; header (sent in the clear beside it) is
  // authenticated too.
  std::vector<uint8_t> seal(const std::vector<uint8_t>& plain,
                            const uint8_t* header, size_t headerBytes);

 private:
  SessionKey key_;
  uint64_t sent_;
};

class Opener {
 public:
  explicit Opener(const SessionKey& key, uint64_t firstNumber = 0)
      : key_(key), received_(firstNumber) {}
  ~Opener();
  Opener(const Opener&) = delete;
  Opener& operator=(const Opener&) = delete;

  // The plain text of the next message, or false when it was not sealed by
  // the peer's Sealer as its next message (then nothing from this
  // connection can be trusted any more).
  bool open(const std::vector<uint8_t>& sealed, const uint8_t* header,
            size_t headerBytes, std::vector<uint8_t>* plain);

 private:
  SessionKey key_;
  uint64_t received_;
};

// For channels that may drop a message (a side channel that never blocks):
// the sender numbers each message and sends the number beside it; the
// receiver takes any number above the last it took, so a message may be
// lost on the way but never replayed, reordered or altered. Numbers start
// at 1. A key serves either these or a Sealer, never both.
std::vector<uint8_t> sealNumbered(const SessionKey& key, uint64_t number,
                                  const std::vector<uint8_t>& plain,
                                  const uint8_t* header, size_t headerBytes);
// False when the message was not sealed with key as `number`, or number
// is not above *last (then *last is unchanged).
bool openNumbered(const SessionKey& key, uint64_t number, uint64_t* last,
                  const std::vector<uint8_t>& sealed, const uint8_t* header,
                  size_t headerBytes, std::vector<uint8_t>* plain);

}  // namespace mcl
