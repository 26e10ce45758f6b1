// Timing tokens of `mcl-perf tp` and `pp`: each rank times every token;
// a token takes as long as its slowest rank.
#pragma once

#include <mcl/mcl.h>

#include <vector>

#include "common/token_report.h"

namespace mcl::perf {

// Takes, token by token, the largest of the ranks' times (an mcl call on
// comm), and fills row's min, median and p99 (microseconds).
void summarizeTokens(std::vector<double>& microseconds, mclComm_t comm,
                     int rank, TokenRow* row);

// Sums a count of wrong elements over the ranks.
int64_t sumOverRanks(int64_t count, mclComm_t comm, int rank);

}  // namespace mcl::perf
