#include "latency/latency_flags.h"

#include <CLI/CLI.hpp>

#include "common/flag_sets.h"
#include "common/options.h"

namespace mcl::perf {

void addLatencyFlags(CLI::App* command, Options* o) {
  command->footer(
      "Round trips between every pair of ranks over each transport that "
      "reaches the pair, side by side: median and 99th percentile in us, and "
      "TCP's time over the others'. 8 bytes and 1000 round trips per pair "
      "unless -b/-e and -n say otherwise.");
  addRankFlags(command, o,
               "the transports to compare: some of shm,tcp,rdma, separated "
               "by commas (default all three)");
  addSizeFlags(command, o, "8", "8");
  addIterationFlags(command, o, "1000 round trips",
                    "a tenth of the timed ones");
  addReportFlags(command, o, true);
}

}  // namespace mcl::perf
