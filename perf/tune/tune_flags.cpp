#include "tune/tune_flags.h"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "bench/collective_bench.h"
#include "common/flag_sets.h"
#include "common/options.h"

namespace mcl::perf {

void addTuneFlags(CLI::App* command, Options* o) {
  command->footer(
      "The tuner's link model and its predicted time of every algorithm at "
      "every size (default 8 B to 64 MiB, factor 2), marking its pick.");
  command
      ->add_option_function<std::string>(
          "collective",
          [o](const std::string& name) {
            const std::optional<Collective> c = parseCollective(name);
            if (!c)
              throw CLI::ValidationError("tune: unknown collective '" + name +
                                         "': expected one of " +
                                         collectiveNameList());
            o->collective = *c;
          },
          "the collective (default allreduce)")
      ->type_name("COLLECTIVE");
  addRankFlags(command, o,
               "mclConfig_t.transport (default MCL_TRANSPORT, else auto)");
  addSizeFlags(command, o, "8", "64M, by factors of 2");
  addDatatypeFlag(command, o, false);
  addReportFlags(command, o, false);
}

}  // namespace mcl::perf
