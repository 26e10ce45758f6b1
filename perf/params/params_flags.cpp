#include "params/params_flags.h"

#include <CLI/CLI.hpp>

#include "common/flag_sets.h"
#include "common/options.h"

namespace mcl::perf {

void addParamsFlags(CLI::App* command, Options* o) {
  command->footer(
      "Every MCL_* variable mcl reads: the value in effect, whether it comes "
      "from the environment or the default, and what it does.");
  addReportFlags(command, o, false);
}

}  // namespace mcl::perf
