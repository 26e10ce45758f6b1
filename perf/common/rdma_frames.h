// What RDMA did with its frames: the frames the run's communicators
// received over RDMA, lost, got twice and sent again, summed over the
// ranks (mclCommGetTopology's "transport_counters"), so a lossy cable
// shows beside the figures it slowed.
#pragma once

#include <mcl/mcl.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mcl::perf {

struct RdmaFrames {
  bool any = false;  // some communicator ran RDMA
  uint64_t received = 0;
  uint64_t lost = 0;
  uint64_t duplicated = 0;
  uint64_t resent = 0;
  uint64_t probes = 0;
  uint64_t wiresGivenUp = 0;  // cables lost mid-job, each way and channel
  uint64_t piecesMoved = 0;   // their pieces sent again over the others
};

// This rank's counts on `comms` (each counted once).
RdmaFrames rdmaFramesOf(const std::vector<mclComm_t>& comms, int rank);

// Sums every rank's counts over `comm` (collective); "" when no rank ran
// RDMA, else "# RDMA frames (all ranks): ...", and a line of its own for
// wires given up mid-job.
std::string rdmaLine(RdmaFrames mine, mclComm_t comm, int rank);

}  // namespace mcl::perf
