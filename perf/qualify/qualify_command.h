// mcl-perf qualify: every cable tested alone (round trips, then a stream
// each way) and every Mac's memory and reduction rates, judged OK, SLOW or
// DEAD; `allreduce --qualify` runs it before its table.
#pragma once

#include <mcl/mcl.h>

#include "common/options.h"
#include "common/rank_setup.h"
#include "qualify/qualify_report.h"

namespace mcl::perf {

// On the job's communicator, every rank: rank 0 prints the report (and,
// when writeJson, writes options.jsonPath). True on every rank when every
// cable and Mac passed.
// *results (when given) receives what was measured and judged.
bool qualifyCluster(const Options& options, mclComm_t job, int rank, int nranks,
                    bool writeJson, QualifyResults* results = nullptr);

// `mcl-perf qualify`: joins, qualifies, leaves. kExitOk when everything
// passed, else kExitFailure.
int runQualifyRank(const Options& options, const RankSetup& setup);

}  // namespace mcl::perf
