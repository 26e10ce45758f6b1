#include "pp/pp_flags.h"

#include <CLI/CLI.hpp>

#include "common/decode_shape.h"
#include "common/flag_sets.h"
#include "common/options.h"

namespace mcl::perf {

void addPpFlags(CLI::App* command, Options* o) {
  command->footer(
      "Pipeline-parallel decoding's communication, one stage per rank: each "
      "token's activations (batch x hidden elements) go from stage to stage, "
      "then the last stage sends the token ids back to the first. Per "
      "token: the median and p99 time of the trip, and the tokens per "
      "second communication alone allows. Checked first (-c 0: not).");
  addDecodeShapeFlags(command, &o->decode, false);
  addIterationFlags(command, o, "100 tokens", "10 tokens");
  addIntFlag(
      command, "-c,--check", 0, 1 << 20, [o](int n) { o->check = n; },
      "check N tokens' trips first; 0: not (#wrong shows N/A)");
  addRankFlags(command, o,
               "mclConfig_t.transport, e.g. auto, shm or tcp (default "
               "MCL_TRANSPORT, else auto)");
  addReportFlags(command, o, true);
}

}  // namespace mcl::perf
