#include "topo/topo_flags.h"

#include <CLI/CLI.hpp>

#include <string>

#include "common/flag_sets.h"
#include "common/options.h"

namespace mcl::perf {

void addTopoFlags(CLI::App* command, Options* o) {
  command->footer(
      "Shows the cluster: hosts and ranks, every cable with the interface at "
      "both ends, its speed, the wires per pair, the shape, and the path each "
      "pair of ranks takes.");
  addRankFlags(command, o,
               "mclConfig_t.transport (default MCL_TRANSPORT, else auto)");
  command->add_flag("--check", o->checkTopology,
                    "also explain each finding of the cabling checks with its "
                    "fix; exit 1 when one is an error");
  addTextFlag(
      command, "--dot", [o](const std::string& path) { o->dotPath = path; },
      "write the cluster as Graphviz to FILE", "FILE");
  addReportFlags(command, o, false);
}

}  // namespace mcl::perf
