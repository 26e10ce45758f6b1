#include "platform/tcp_progress.h"

#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#if defined(__linux__)
#include <linux/sockios.h>
// The kernel's own struct: glibc's copy in <netinet/tcp.h> stops before
// tcpi_bytes_retrans (Linux 4.19).
#include <linux/tcp.h>
#else
#include <netinet/tcp.h>
#endif

#include <algorithm>
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
  out->packetsIn = info.tcpi_segs_in;
  out->packetsResent = info.tcpi_total_retrans;
  return true;
#elif defined(__APPLE__)
  tcp_connection_info info{};
  socklen_t length = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_CONNECTION_INFO, &info, &length) != 0)
    return false;
  out->unacked = info.tcpi_snd_sbbytes > 0;
  out->resentBytes = info.tcpi_txretransmitbytes;
  out->packetsIn = info.tcpi_rxpackets;
  out->packetsResent = info.tcpi_txretransmitpackets;
  return true;
#else
  (void)fd;
  return false;
#endif
}

bool bytesNotAcknowledged(int fd, uint64_t* bytes) {
  *bytes = 0;
#if defined(__linux__)
  int queued = 0;
  if (ioctl(fd, SIOCOUTQ, &queued) != 0 || queued < 0) return false;
#elif defined(__APPLE__)
  int queued = 0;
  socklen_t length = sizeof(queued);
  if (getsockopt(fd, SOL_SOCKET, SO_NWRITE, &queued, &length) != 0 ||
      queued < 0)
    return false;
#else
  (void)fd;
  return false;
#endif
#if defined(__linux__) || defined(__APPLE__)
  *bytes = static_cast<uint64_t>(queued);
  return true;
#endif
}

bool tellsAcknowledgements(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  int type = 0;
  socklen_t typeLength = sizeof(type);
  uint64_t unacked = 0;
  return getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0 &&
         (address.ss_family == AF_INET || address.ss_family == AF_INET6) &&
         getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &typeLength) == 0 &&
         type == SOCK_STREAM && bytesNotAcknowledged(fd, &unacked);
}

bool looksSilent(const TcpProgress& p) {
  return p.unacked && p.timeoutsInARow >= kSilentTimeouts &&
         p.msSinceAck >= int64_t{kSilentMs};
}

bool SilenceHistory::silent(const TcpProgress& p, int64_t nowNs,
                            int* timeouts) {
  *timeouts = 0;
  if (p.timeoutsInARow >= 0 && p.msSinceAck >= 0) {
    *timeouts = p.timeoutsInARow;
    return looksSilent(p);
  }
  // Something came, nothing waits for an answer (quiet is not silence
  // then), or nobody looked for a while: the count starts again here.
  constexpr int64_t kLongestGapNs = 500'000'000;
  const bool gap = nowNs - lastLookNs_ > kLongestGapNs;
  lastLookNs_ = nowNs;
  if (!known_ || gap || p.packetsIn != packetsIn_ || !p.unacked) {
    known_ = true;
    packetsIn_ = p.packetsIn;
    resentSince_ = p.packetsResent;
    quietSinceNs_ = nowNs;
    return false;
  }
  const uint64_t resent = p.packetsResent - resentSince_;
  *timeouts = static_cast<int>(std::min<uint64_t>(resent, 1000));
  return resent >= uint64_t{kSilentTimeouts} &&
         nowNs - quietSinceNs_ >= int64_t{kSilentMs} * 1'000'000;
}

}  // namespace mcl::platform
