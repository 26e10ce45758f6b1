// The table of `mcl-perf tp` and `mcl-perf pp`: one row per model and
// batch size, each token's communication timed (the slowest rank's), with
// what it allows: calls per second and the tokens per second communication
// alone would let a model reach. The same rows go to -J (JSON) and --csv.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/options.h"

namespace mcl::perf {

struct TokenRow {
  std::string model;
  int layers = 0;
  int hidden = 0;
  int batch = 0;
  std::string type;      // "bf16"
  size_t callBytes = 0;  // one call's message
  int callsPerToken = 0;
  int tokens = 0;  // timed
  double minUs = 0;
  double medianUs = 0;
  double p99Us = 0;
  int64_t wrong = 0;  // elements the check found wrong (-1: not checked)
};

// A prompt's prefill for one model: the slowest rank's time, the median
// of kPrefillRuns.
struct PrefillRow {
  std::string model;
  int promptTokens = 0;
  int steps = 0;  // of at most kPrefillChunkTokens
  int calls = 0;  // messages in all
  double medianMs = 0;
};
constexpr int kPrefillRuns = 3;

struct TokenTable {
  std::string operation;  // "tp" or "pp"
  std::string title;      // the first line, after "# mcl-perf OPERATION: "
  std::string callName;   // "all-reduce", "hop"
  int nranks = 0;
  std::string transport;
  int warmup = 0;
  std::vector<TokenRow> rows;
  std::vector<PrefillRow> prefill;  // with --prompt
};

void printTokenTable(const TokenTable& table);

// -J and --csv as the options say; false (a message on stderr) when a file
// cannot be written.
bool writeTokenReports(const TokenTable& table, const Options& options,
                       int libraryVersion, const std::string& startTime);

}  // namespace mcl::perf
