// The memory a run took: mcl's own buffers for its peers (from the
// communicator's topology JSON) and the largest resident set of any rank,
// for the line under the table and the JSON report.
#pragma once

#include <mcl/mcl.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace mcl::perf {

// This process' peak resident set, bytes (getrusage).
int64_t peakResidentBytes();

// Collective over comm: the largest peak resident set of any rank.
int64_t largestPeakResidentBytes(mclComm_t comm, int rank);

// "# mcl buffers: 1.0 MiB (shm 1.0 MiB, ...); peak resident memory ..."
std::string memoryLine(const nlohmann::json& memory, int64_t peakRss);

}  // namespace mcl::perf
