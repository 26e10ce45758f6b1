#include "common/token_timing.h"

#include <mcl/mcl.h>

#include <cstdint>
#include <vector>

#include "common/mcl_error.h"
#include "common/sample_stats.h"
#include "common/token_report.h"

namespace mcl::perf {

void summarizeTokens(std::vector<double>& microseconds, mclComm_t comm,
                     int rank, TokenRow* row) {
  checkMcl(rank, "mclAllReduce",
           mclAllReduce(microseconds.data(), microseconds.data(),
                        microseconds.size(), mclFloat64, mclMax, comm, nullptr),
           comm);
  row->tokens = static_cast<int>(microseconds.size());
  const SampleSummary s = summarize(microseconds);
  row->minUs = s.min;
  row->medianUs = s.median;
  row->p99Us = s.p99;
}

int64_t sumOverRanks(int64_t count, mclComm_t comm, int rank) {
  checkMcl(rank, "mclAllReduce",
           mclAllReduce(&count, &count, 1, mclInt64, mclSum, comm, nullptr),
           comm);
  return count;
}

}  // namespace mcl::perf
