#include "tp/tp_flags.h"

#include <CLI/CLI.hpp>

#include "common/decode_shape.h"
#include "common/flag_sets.h"
#include "common/options.h"

namespace mcl::perf {

void addTpFlags(CLI::App* command, Options* o) {
  command->footer(
      "Tensor-parallel decoding's communication: token after token, every "
      "layer's all-reduces of batch x hidden elements (in place, back to "
      "back, as a model issues them). Per token: the median and p99 time, "
      "all-reduces per second, and the tokens per second communication "
      "alone allows. Each token's calls are checked once first (-c 0: not).");
  addDecodeShapeFlags(command, &o->decode, true);
  addIterationFlags(command, o, "100 tokens", "10 tokens");
  addIntFlag(
      command, "-c,--check", 0, 1 << 20, [o](int n) { o->check = n; },
      "check one token's calls first; 0: not (#wrong shows N/A)");
  addRankFlags(command, o,
               "mclConfig_t.transport, e.g. auto, shm or tcp (default "
               "MCL_TRANSPORT, else auto)");
  addReportFlags(command, o, true);
}

}  // namespace mcl::perf
