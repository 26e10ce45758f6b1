// The flags of `mcl-perf plan` (perf/plan/plan_flags.cpp), as parsed.
#pragma once

#include <string>

namespace mcl::perf::plan {

struct PlanOptions {
  std::string model;     // --model: a config.json or a preset
  int bits = 16;         // --bits 16|8|4
  int groupSize = 64;    // --group-size (quantized weights)
  int context = 4096;    // --context
  int prompt = 2048;     // --prompt (0: no prefill figure)
  int batch = 1;         // --batch
  std::string fromPath;  // --from FILE: plan offline from a saved cluster
  std::string savePath;  // --save FILE: write the measured cluster
  bool json = false;     // --json: one JSON object instead of the table
  // --mem-bw GB/s and --tflops: each rank's decode rates, instead of the
  // measured (or, on a Mac, quoted) ones.
  double memBwGBps = 0;
  double tflops = 0;
};

}  // namespace mcl::perf::plan
