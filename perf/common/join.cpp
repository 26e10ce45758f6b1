#include "common/join.h"

#include <cstddef>

#include "common/mcl_error.h"

namespace mcl::perf {

mclConfig_t configFor(const Options& options) {
  mclConfig_t config = MCL_CONFIG_INITIALIZER;
  config.commName = "mcl-perf";
  config.blocking = 1;  // the benchmark waits for init (MCL_COMM_BLOCKING=0)
  if (!options.transport.empty()) config.transport = options.transport.c_str();
  if (options.timeoutSeconds > 0)
    config.timeoutSeconds = options.timeoutSeconds;
  return config;
}

mclComm_t joinCommunicator(const Options& options, RankSetup* setup) {
  mclConfig_t config = configFor(options);
  mclComm_t comm = nullptr;
  if (setup->fromEnvironment) {
    checkMcl(-1, "mclCommInitFromEnv", mclCommInitFromEnv(&comm, &config),
             nullptr);
    checkMcl(setup->rank, "mclCommUserRank",
             mclCommUserRank(comm, &setup->rank), comm);
    checkMcl(setup->rank, "mclCommCount", mclCommCount(comm, &setup->nranks),
             comm);
  } else {
    checkMcl(setup->rank, "mclCommInitRankConfig",
             mclCommInitRankConfig(&comm, setup->nranks, setup->id, setup->rank,
                                   &config),
             nullptr);
  }
  return comm;
}

std::string topologyJson(mclComm_t comm, int rank) {
  size_t size = 0;
  checkMcl(rank, "mclCommGetTopology", mclCommGetTopology(comm, nullptr, &size),
           comm);
  std::string text(size, '\0');
  checkMcl(rank, "mclCommGetTopology",
           mclCommGetTopology(comm, text.data(), &size), comm);
  text.resize(size > 0 ? size - 1 : 0);  // the terminating NUL
  return text;
}

}  // namespace mcl::perf
