// Links that take bytes and give back no acknowledgement: a cable whose
// link stays up but that carries nothing (a black-holing switch port, a
// failing cable, a far port wedged). The OS's link state says nothing of
// it; the kernel's own view of each socket does (TCP_INFO on Linux): a
// socket with bytes unacknowledged whose retransmission timer went off
// 3 times in a row (about 1.4 s at the smallest timeout), and no
// acknowledgement of any kind came for a second, has heard nothing from
// its peer for that long (platform/tcp_progress.h).
//
// Looked at only while an operation waits on the connection, at most every
// 100 ms: off the hot path, and never for a link the OS says is down (the
// cable watch judges those). A link goes silent: a WARN naming it, and the
// connection gives its sockets up where another link carries
// (TcpConnection::failOver); every link of the connection silent: the wait
// fails naming them (no path left). On macOS, whose TCP_CONNECTION_INFO
// has neither figure, each socket's history stands in: nothing received
// for a second while bytes waited, and 3 segments resent meanwhile
// (platform::SilenceHistory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "platform/tcp_progress.h"

namespace mcl::transport::tcp {

class LinkSilence {
 public:
  // stripeLinks[i]: the name of the link socket i rides ("cable tb1c1
  // 10.77.1.1 -> 10.77.1.2"); label for messages ("rank 0: rdma to rank
  // 1"). Empty stripeLinks: never looks.
  LinkSilence(std::string label, std::vector<std::string> stripeLinks);

  // fds[i]: socket i. "" while some link may still carry bytes, else why
  // none does. down[i] (where given): the watch says socket i's link is
  // down; its silence is no news then, and is not said as a link up but
  // silent.
  std::string check(const std::vector<int>& fds, int64_t nowNs,
                    const std::vector<bool>& down = {});
  // Whether the link of that name was silent at the last look.
  bool silent(const std::string& link) const;

 private:
  // Whether socket i (fd) looks silent now, and the figure to name.
  bool socketSilent(size_t i, int fd, int64_t nowNs, int* timeouts);

  std::string label_;
  std::vector<std::string> stripeLinks_;
  // Each socket's history (where the kernel has no figures of its own),
  // and the descriptor it is of: a socket taken in anew starts afresh.
  std::vector<platform::SilenceHistory> history_;
  std::vector<int> historyFd_;
  std::vector<std::string> links_;  // distinct, in order
  std::vector<bool> silent_;        // by link, at the last look
  std::vector<bool> said_;          // by link: its silence was said
  int64_t nextLookNs_ = 0;
  std::string trouble_;
};

// The bytes the kernel sent again on socket fd so far, for `qualify`'s
// LOSSY; false where the system cannot say.
bool socketResentBytes(int fd, uint64_t* bytes);

}  // namespace mcl::transport::tcp
