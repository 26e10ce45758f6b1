// The token loop of `mcl-perf tp` and `pp`: every model and batch size of
// the options, each checked, then timed token by token (a token takes as
// long as its slowest rank), printed and written as one table.
#pragma once

#include <mcl/mcl.h>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/decode_shape.h"
#include "common/options.h"
#include "common/token_report.h"

namespace mcl::perf {

// One model and batch size's communication.
class TokenWorkload {
 public:
  virtual ~TokenWorkload() = default;
  // The calls of one token, on known data, checked: the count of wrong
  // elements over the ranks. `pass` numbers the checks from 1.
  virtual int64_t check(int pass) = 0;
  // One token, timed on this rank (microseconds).
  virtual double token() = 0;
  // A prompt of `tokens` prefilled, the messages only, timed on this rank
  // (microseconds): steps of at most kPrefillChunkTokens, each with the
  // token's messages at chunk x hidden elements.
  virtual double prefill(int tokens) = 0;
  // The messages of a prefill in `steps` steps.
  virtual int prefillCalls(int steps) const = 0;
};

struct TokenBenchmark {
  TokenTable table;  // its operation, title and callName
  std::function<std::unique_ptr<TokenWorkload>(const DecodeModel&, int batch)>
      make;
  std::function<int(const DecodeModel&)> callsPerToken;
  int checkPasses = 1;  // checks per row when -c is on
};

// The flags tp and pp share beside the shape's: -n tokens, -w untimed
// tokens, -c (checkHelp says what it checks), the ranks' and the reports'.
void addTokenRunFlags(CLI::App* command, Options* o,
                      const std::string& checkHelp);

// Sums a count of wrong elements over the ranks (an mcl call on comm).
int64_t sumOverRanks(int64_t count, mclComm_t comm, int rank);

// Runs the benchmark on comm (joined by the caller, which destroys it);
// rank 0 prints the table and writes -J and --csv. Returns the rank's exit
// code: kExitWrongData when a check found wrong elements.
int runTokenBenchmark(const Options& options, TokenBenchmark benchmark,
                      mclComm_t comm, int rank, const std::string& startTime);

}  // namespace mcl::perf
