// Links that went down during the run: what the side channel's cable watch
// counted on the run's communicators (mclCommGetTopology's "link_watch"),
// summed over the ranks, so a cable lost mid-run shows beside the figures
// it slowed or stalled.
#pragma once

#include <mcl/mcl.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mcl::perf {

struct LinkLosses {
  uint64_t lost = 0;
  uint64_t regained = 0;
  uint64_t downNow = 0;
  uint64_t leftOut = 0;  // left out at init: they carried nothing
  double secondsOnFewer = 0;
};

// This rank's counts on `comms`: the most any of them saw (they watch the
// same cables).
LinkLosses linkLossesOf(const std::vector<mclComm_t>& comms, int rank);

// Sums every rank's counts over `comm` (collective); "" when no rank lost
// a link or left one out at init, else "# Links (all ranks, each end
// counted): ...".
std::string linkLossLine(LinkLosses mine, mclComm_t comm, int rank);

}  // namespace mcl::perf
