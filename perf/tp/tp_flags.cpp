#include "tp/tp_flags.h"

#include <CLI/CLI.hpp>

#include "common/decode_shape.h"
#include "common/options.h"
#include "common/token_timing.h"

namespace mcl::perf {

void addTpFlags(CLI::App* command, Options* o) {
  command->footer(
      "Tensor-parallel decoding's communication: token after token, every "
      "layer's all-reduces of batch x hidden elements (in place, back to "
      "back, as a model issues them). Per token: the median and p99 time, "
      "all-reduces per second, and the tokens per second communication "
      "alone allows. Each token's calls are checked once first (-c 0: not).");
  addDecodeShapeFlags(command, &o->decode, true);
  addTokenRunFlags(command, o, "check one token's calls first");
}

}  // namespace mcl::perf
