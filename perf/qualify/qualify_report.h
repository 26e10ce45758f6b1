// What `mcl-perf qualify` prints and writes: a line per cable (round trip,
// bandwidth each way, nominal rate, verdict and why), a line per Mac
// (memory copy and reduction rates, verdict), and the overall verdict.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "common/options.h"
#include "qualify/qualify_plan.h"
#include "qualify/qualify_verdict.h"

namespace mcl::perf {

struct QualifyResults {
  QualifyPlan plan;
  std::vector<CableMeasurement> cables;  // one per plan.cables
  std::vector<MacMeasurement> macs;      // one per plan.macs

  // Every cable and Mac OK.
  bool passed() const;
};

void printQualifyReport(const QualifyResults& results, std::FILE* out);

std::string qualifyJson(const QualifyResults& results, const Options& options,
                        int libraryVersion, const std::string& startTime);

}  // namespace mcl::perf
