#include "join.h"

#include "mcl_error.h"

namespace mcl::perf {

mclComm_t joinCommunicator(const Options& options, RankSetup* setup) {
  mclConfig_t config = MCL_CONFIG_INITIALIZER;
  config.commName = "mcl-perf";
  if (!options.transport.empty()) config.transport = options.transport.c_str();
  if (options.timeoutSeconds > 0)
    config.timeoutSeconds = options.timeoutSeconds;
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

}  // namespace mcl::perf
