#include "common/tcp_resends.h"

#include <mcl/mcl.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/join.h"
#include "common/mcl_error.h"
#include "common/text_format.h"

namespace mcl::perf {

TcpResends tcpResendsOf(const std::vector<mclComm_t>& comms, int rank) {
  TcpResends r;
  for (const nlohmann::json& counters :
       topologyParts(comms, rank, "transport_counters")) {
    if (!counters.contains("tcp")) continue;
    r.sent += counters["tcp"].value("bytes_sent", uint64_t{0});
    r.resent += counters["tcp"].value("bytes_resent", uint64_t{0});
    r.socketsGivenUp += counters["tcp"].value("sockets_given_up", uint64_t{0});
    r.bytesMoved += counters["tcp"].value("bytes_moved", uint64_t{0});
    r.socketsTakenBack +=
        counters["tcp"].value("sockets_taken_back", uint64_t{0});
  }
  return r;
}

std::string tcpResendLine(TcpResends mine, mclComm_t comm, int rank) {
  double sums[5] = {double(mine.sent), double(mine.resent),
                    double(mine.socketsGivenUp), double(mine.bytesMoved),
                    double(mine.socketsTakenBack)};
  checkMcl(rank, "mclAllReduce",
           mclAllReduce(sums, sums, 5, mclFloat64, mclSum, comm, nullptr),
           comm);
  std::string text;
  if (sums[1] != 0)
    text = formatText(
        "# TCP resends (all ranks): %.0f of %.0f bytes sent again by the "
        "kernel (%.3f%%): packets lost on the way",
        sums[1], sums[0], sums[0] > 0 ? 100 * sums[1] / sums[0] : 0.0);
  if (sums[2] != 0)
    text += (text.empty() ? "" : "\n") +
            formatText(
                "# TCP sockets given up (all ranks): %.0f, their "
                "cables lost mid-job (see the WARNs); %.0f bytes of "
                "pieces sent again over the links that remained; %.0f "
                "taken back when their cables came back",
                sums[2], sums[3], sums[4]);
  return text;
}

}  // namespace mcl::perf
