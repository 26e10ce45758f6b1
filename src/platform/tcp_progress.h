// What the kernel knows of one TCP socket's progress: whether bytes it sent
// wait for an acknowledgement, how often in a row its retransmission timer
// went off, how long since any acknowledgement came, and how much it sent
// again (Linux TCP_INFO; macOS TCP_CONNECTION_INFO, which has no count of
// timeouts in a row). Read off the hot path: by the TCP transport while an
// operation waits, by the side channel's thread between its beats.
#pragma once

#include <cstdint>

namespace mcl::platform {

// A socket whose peer has heard nothing from it this long: unacknowledged
// bytes, the retransmission timer gone off kSilentTimeouts times in a row
// (about 1.4 s at the smallest timeout), no acknowledgement of any kind for
// kSilentMs (a receiver that lives but drops data, or a lost
// retransmission, still acknowledges).
constexpr int kSilentTimeouts = 3;
constexpr unsigned kSilentMs = 1000;

struct TcpProgress {
  bool unacked = false;      // sent bytes wait for an acknowledgement
  int timeoutsInARow = -1;   // -1: the system does not say
  int64_t msSinceAck = -1;   // -1: the system does not say
  uint64_t resentBytes = 0;  // the bytes it sent again
};

// False where the system cannot say (not a TCP socket, or no such call).
bool readTcpProgress(int fd, TcpProgress* out);

// Whether progress says the link under the socket carries nothing (see
// kSilentTimeouts); false where the system cannot tell.
bool looksSilent(const TcpProgress& progress);

// The bytes written to TCP socket fd that its peer has not acknowledged yet
// (sent or not): Linux SIOCOUTQ, macOS SO_NWRITE. What was written before
// them sits in the peer's kernel, readable there even once the cable is
// gone. False where the system cannot say.
bool bytesNotAcknowledged(int fd, uint64_t* bytes);
// Whether fd is a TCP socket whose unacknowledged bytes the system tells
// (for any other kind, the same calls count bytes the peer has not read).
bool tellsAcknowledgements(int fd);

}  // namespace mcl::platform
