// What the kernel knows of one TCP socket's progress: whether bytes it sent
// wait for an acknowledgement, how often in a row its retransmission timer
// went off, how long since any acknowledgement came, and how much it sent
// again (Linux TCP_INFO; macOS TCP_CONNECTION_INFO, which has neither a
// count of timeouts in a row nor the time since the last acknowledgement:
// there the socket's own history stands in, SilenceHistory). Read off the
// hot path: by the TCP transport while an operation waits, by the side
// channel's thread between its beats.
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
  // Segments it received (acknowledgements included) and sent again.
  uint64_t packetsIn = 0;
  uint64_t packetsResent = 0;
};

// False where the system cannot say (not a TCP socket, or no such call).
bool readTcpProgress(int fd, TcpProgress* out);

// Whether progress says the link under the socket carries nothing (see
// kSilentTimeouts); false where the system cannot tell.
bool looksSilent(const TcpProgress& progress);

// One socket's silence judged by its history, where the kernel does not
// say how many timeouts in a row or how long since an acknowledgement
// (macOS): nothing received for kSilentMs while bytes waited, and
// kSilentTimeouts segments or more sent again meanwhile (with nothing
// coming back, no duplicate acknowledgement can have caused them: they
// are the retransmission timer's). Where the kernel says (Linux), its own
// figures decide (looksSilent). Looked at every 100-250 ms by its owner;
// after a longer gap (nobody waited) the count starts again, since the
// quiet before it was not seen.
class SilenceHistory {
 public:
  // The socket's progress at nowNs: whether it looks silent, and in
  // *timeouts the figure to name (timeouts in a row, or segments resent
  // since anything came).
  bool silent(const TcpProgress& progress, int64_t nowNs, int* timeouts);

 private:
  bool known_ = false;
  uint64_t packetsIn_ = 0;
  uint64_t resentSince_ = 0;  // packetsResent when something last came
  int64_t quietSinceNs_ = 0;  // since when nothing came while bytes waited
  int64_t lastLookNs_ = 0;
};

// The bytes written to TCP socket fd that its peer has not acknowledged yet
// (sent or not): Linux SIOCOUTQ, macOS SO_NWRITE. What was written before
// them sits in the peer's kernel, readable there even once the cable is
// gone. False where the system cannot say.
bool bytesNotAcknowledged(int fd, uint64_t* bytes);
// Whether fd is a TCP socket whose unacknowledged bytes the system tells
// (for any other kind, the same calls count bytes the peer has not read).
bool tellsAcknowledgements(int fd);

}  // namespace mcl::platform
