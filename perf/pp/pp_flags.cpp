#include "pp/pp_flags.h"

#include <CLI/CLI.hpp>

#include "common/decode_shape.h"
#include "common/options.h"
#include "common/token_timing.h"

namespace mcl::perf {

void addPpFlags(CLI::App* command, Options* o) {
  command->footer(
      "Pipeline-parallel decoding's communication, one stage per rank: each "
      "token's activations (batch x hidden elements) go from stage to stage, "
      "then the last stage sends the token ids back to the first. Per "
      "token: the median and p99 time of the trip, and the tokens per "
      "second communication alone allows. Checked first (-c 0: not).");
  addDecodeShapeFlags(command, &o->decode, false);
  addTokenRunFlags(command, o, "check N tokens' trips first");
}

}  // namespace mcl::perf
