// Joining the communicator a run measures: forked locally (rank, nranks and
// the unique id given) or as one rank of a launcher's job.
#pragma once

#include <mcl/mcl.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/options.h"
#include "common/rank_setup.h"

namespace mcl::perf {

// The config of mcl-perf's communicators: its name, --transport and -T.
// Its strings point into `options`.
mclConfig_t configFor(const Options& options);

// Applies --transport and -T; fills setup->rank and setup->nranks when the
// job comes from the environment. An mcl error ends the process
// (dieOnMclError).
mclComm_t joinCommunicator(const Options& options, RankSetup* setup);

// mclCommGetTopology's JSON (the cluster, and the tuner's link model).
std::string topologyJson(mclComm_t comm, int rank);

// The key `key` of the topology of each distinct communicator of `comms`
// (null ones skipped; an empty object where it is missing): what a run's
// communicators counted, for its summary lines.
std::vector<nlohmann::json> topologyParts(const std::vector<mclComm_t>& comms,
                                          int rank, const char* key);

// --transport, else MCL_TRANSPORT, else "auto".
std::string transportName(const Options& options);

// The transport of each of this rank's pairs, as the communicator's
// topology says: "rdma (emulated)" when every peer is reached alike, else
// grouped, "rdma to 1,3; tcp to 2". `fallback` for a one-rank job.
std::string transportsOfRank(mclComm_t comm, int rank,
                             const std::string& fallback);

}  // namespace mcl::perf
