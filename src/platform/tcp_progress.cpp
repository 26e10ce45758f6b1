#include "platform/tcp_progress.h"

#include <netinet/in.h>
#include <sys/socket.h>
#if defined(__linux__)
// The kernel's own struct: glibc's copy in <netinet/tcp.h> stops before
// tcpi_bytes_retrans (Linux 4.19).
#include <linux/tcp.h>
#else
#include <netinet/tcp.h>
#endif

#include <cstdint>

namespace mcl::platform {

bool readTcpProgress(int fd, TcpProgress* out) {
  *out = TcpProgress{};
#if defined(__linux__)
  tcp_info info{};
  socklen_t length = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return false;
  out->unacked = info.tcpi_unacked > 0;
  out->timeoutsInARow = info.tcpi_retransmits;
  out->msSinceAck = info.tcpi_last_ack_recv;
  // Older kernels fill less of the struct: what they leave out reads 0.
  out->resentBytes = info.tcpi_bytes_retrans;
  return true;
#elif defined(__APPLE__)
  tcp_connection_info info{};
  socklen_t length = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_CONNECTION_INFO, &info, &length) != 0)
    return false;
  out->unacked = info.tcpi_snd_sbbytes > 0;
  out->resentBytes = info.tcpi_txretransmitbytes;
  return true;
#else
  (void)fd;
  return false;
#endif
}

bool looksSilent(const TcpProgress& p) {
  return p.unacked && p.timeoutsInARow >= kSilentTimeouts &&
         p.msSinceAck >= int64_t{kSilentMs};
}

}  // namespace mcl::platform
