// The line a multi-host all-reduce ends with, the one-command answer to "is
// my cluster healthy?": the bus bandwidth reached against what the
// detected cables allow, and the slowest cable by name (measured, after
// --qualify; else by its nominal rate).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "qualify/qualify_report.h"

namespace mcl::perf {

// "" when the job has one host and no emulated fabric. The cables are
// those of the transport the communicator's paths take (RDMA or TCP).
// qualified: the --qualify results, or null.
std::string clusterVerdict(const nlohmann::json& topology, int nranks,
                           double peakBusBw, const QualifyResults* qualified);

}  // namespace mcl::perf
