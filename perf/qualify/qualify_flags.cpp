#include "qualify/qualify_flags.h"

#include <CLI/CLI.hpp>

#include "common/flag_sets.h"
#include "common/options.h"

namespace mcl::perf {

void addQualifyFlags(CLI::App* command, Options* o) {
  command->footer(
      "Tests every cable alone (each wire of a doubled pair too): round "
      "trips, and a stream each way against the cable's nominal rate and the "
      "other cables'; OK, SLOW or DEAD. Then each Mac's memory copy and "
      "reduction rates. Exits 1 when any cable or Mac fails. A benchmark's "
      "--qualify runs it first.");
  addRankFlags(command, o, "the cables' transport: tcp or rdma");
  addReportFlags(command, o, false);
}

}  // namespace mcl::perf
