#include "common/rdma_frames.h"

#include <mcl/mcl.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/join.h"
#include "common/mcl_error.h"
#include "common/text_format.h"

namespace mcl::perf {

RdmaFrames rdmaFramesOf(const std::vector<mclComm_t>& comms, int rank) {
  RdmaFrames f;
  for (const nlohmann::json& counters :
       topologyParts(comms, rank, "transport_counters")) {
    if (!counters.contains("rdma")) continue;
    const nlohmann::json& rdma = counters["rdma"];
    auto count = [&](const char* name) {
      return rdma.value(name, uint64_t{0});
    };
    f.any = true;
    f.received += count("frames_received");
    f.lost += count("frames_lost");
    f.duplicated += count("frames_duplicated");
    f.resent += count("frames_resent");
    f.probes += count("probes");
    f.wiresGivenUp += count("wires_given_up");
    f.piecesMoved += count("pieces_moved");
  }
  return f;
}

std::string rdmaLine(RdmaFrames mine, mclComm_t comm, int rank) {
  int64_t sums[8] = {mine.any ? 1 : 0,           int64_t(mine.received),
                     int64_t(mine.lost),         int64_t(mine.duplicated),
                     int64_t(mine.resent),       int64_t(mine.probes),
                     int64_t(mine.wiresGivenUp), int64_t(mine.piecesMoved)};
  checkMcl(rank, "mclAllReduce",
           mclAllReduce(sums, sums, 8, mclInt64, mclSum, comm, nullptr), comm);
  if (sums[0] == 0) return "";
  const double lostShare =
      sums[1] > 0 ? 100.0 * double(sums[2]) / double(sums[1]) : 0;
  std::string text = formatText(
      "# RDMA frames (all ranks): %lld received, %lld lost (%.4f%%), %lld "
      "duplicated, %lld sent again, %lld probes",
      static_cast<long long>(sums[1]), static_cast<long long>(sums[2]),
      lostShare, static_cast<long long>(sums[3]),
      static_cast<long long>(sums[4]), static_cast<long long>(sums[5]));
  if (sums[6] != 0)
    text += formatText(
        "\n# RDMA wires given up (all ranks): %lld, their cables lost "
        "mid-job (see the WARNs); %lld pieces sent again over the cables "
        "that remained or the TCP standby",
        static_cast<long long>(sums[6]), static_cast<long long>(sums[7]));
  return text;
}

}  // namespace mcl::perf
