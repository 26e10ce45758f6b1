#include "common/link_losses.h"

#include <mcl/mcl.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/join.h"
#include "common/mcl_error.h"
#include "common/text_format.h"

namespace mcl::perf {

LinkLosses linkLossesOf(const std::vector<mclComm_t>& comms, int rank) {
  LinkLosses l;
  // Every communicator of the run (one per algorithm under --algo all)
  // watches the same cables: the most any saw, not their sum.
  for (const nlohmann::json& watch : topologyParts(comms, rank, "link_watch")) {
    l.lost = std::max(l.lost, watch.value("lost", uint64_t{0}));
    l.regained = std::max(l.regained, watch.value("regained", uint64_t{0}));
    l.downNow = std::max(l.downNow, watch.value("down_now", uint64_t{0}));
    l.leftOut =
        std::max(l.leftOut, watch.value("left_out_at_init", uint64_t{0}));
    l.secondsOnFewer =
        std::max(l.secondsOnFewer, watch.value("seconds_on_fewer_links", 0.0));
  }
  return l;
}

std::string linkLossLine(LinkLosses mine, mclComm_t comm, int rank) {
  double sums[5] = {double(mine.lost), double(mine.regained),
                    double(mine.downNow), mine.secondsOnFewer,
                    double(mine.leftOut)};
  checkMcl(rank, "mclAllReduce",
           mclAllReduce(sums, sums, 5, mclFloat64, mclSum, comm, nullptr),
           comm);
  if (sums[0] == 0 && sums[4] == 0) return "";
  // Each cable has two ends, and each end's rank counts it.
  const std::string leftOut = sums[4] == 0
                                  ? ""
                                  : formatText(
                                        "%.0f left out at init (they carried "
                                        "nothing: see the WARN); ",
                                        sums[4]);
  return formatText(
      "# Links (all ranks, each end counted): %s%.0f went down, %.0f came "
      "back, %.0f down at the end; %.1f s on fewer links, summed over the "
      "pairs and their ends",
      leftOut.c_str(), sums[0], sums[1], sums[2], sums[3]);
}

}  // namespace mcl::perf
