#include "topo/topo_command.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "common/join.h"
#include "common/mcl_error.h"
#include "topo/topo_report.h"

namespace mcl::perf {

namespace {

bool writeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) {
    std::fprintf(stderr, "mcl-perf: cannot write %s: %s\n", path.c_str(),
                 std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace

int runTopoRank(const Options& options, const RankSetup& given) {
  RankSetup setup = given;
  // Show this host's interfaces and ports even when the job has one host.
  setenv("MCL_TOPO_DETECT", "always", 0);
  mclComm_t comm = joinCommunicator(options, &setup);
  int code = kExitOk;
  if (setup.rank == 0) {
    const std::string text = topologyJson(comm, 0);
    nlohmann::json topo = nlohmann::json::parse(text);
    printTopology(topo, stdout);
    int errors = printFindings(topo, options.checkTopology, stdout);
    if (options.checkTopology && errors > 0) code = kExitFailure;
    if (!options.dotPath.empty() &&
        !writeFile(options.dotPath, topologyDot(topo)))
      code = kExitFailure;
    if (!options.jsonPath.empty() && !writeFile(options.jsonPath, text + "\n"))
      code = kExitFailure;
  }
  checkMcl(setup.rank, "mclCommDestroy", mclCommDestroy(comm), nullptr);
  return code;
}

}  // namespace mcl::perf
