// What TCP sent again: the bytes the run's communicators handed to their
// sockets and the bytes the kernel retransmitted (mclCommGetTopology's
// "transport_counters"), summed over the ranks, so a cable that drops
// packets shows beside the figures it slowed; qualify calls a cable that
// resends more than 1 byte in 100 LOSSY. Also what mcl itself sent again:
// the sockets given up with their cables mid-job, and the bytes of pieces
// sent again over the links that remained.
#pragma once

#include <mcl/mcl.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mcl::perf {

struct TcpResends {
  uint64_t sent = 0;
  uint64_t resent = 0;
  uint64_t socketsGivenUp = 0;
  uint64_t bytesMoved = 0;
  uint64_t socketsTakenBack = 0;
};

// This rank's counts on `comms` (each counted once).
TcpResends tcpResendsOf(const std::vector<mclComm_t>& comms, int rank);

// Sums every rank's counts over `comm` (collective); "" when nothing was
// sent again, else "# TCP resends (all ranks): ..." and, where sockets were
// given up, "# TCP sockets given up (all ranks): ..." (one line each, the
// second saying how many were taken back).
std::string tcpResendLine(TcpResends mine, mclComm_t comm, int rank);

}  // namespace mcl::perf
