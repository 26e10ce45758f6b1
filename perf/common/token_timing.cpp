#include "common/token_timing.h"

#include <mcl/mcl.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/decode_shape.h"
#include "common/flag_sets.h"
#include "common/join.h"
#include "common/mcl_error.h"
#include "common/progress.h"
#include "common/sample_stats.h"
#include "common/token_report.h"

namespace mcl::perf {

namespace {

// Takes, token by token, the largest of the ranks' times, and fills the
// row's min, median and p99 (microseconds).
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

// One untimed step, then kPrefillRuns prompts: the median of the slowest
// rank's times.
PrefillRow timePrefill(TokenWorkload& run, const DecodeModel& model, int prompt,
                       mclComm_t comm, int rank) {
  PrefillRow row;
  row.model = model.name;
  row.promptTokens = prompt;
  row.steps = (prompt + kPrefillChunkTokens - 1) / kPrefillChunkTokens;
  row.calls = run.prefillCalls(row.steps);
  run.prefill(std::min(prompt, kPrefillChunkTokens));
  std::vector<double> us;
  for (int r = 0; r < kPrefillRuns; ++r) us.push_back(run.prefill(prompt));
  checkMcl(rank, "mclAllReduce",
           mclAllReduce(us.data(), us.data(), us.size(), mclFloat64, mclMax,
                        comm, nullptr),
           comm);
  row.medianMs = summarize(us).median / 1000;
  return row;
}

}  // namespace

void addTokenRunFlags(CLI::App* command, Options* o,
                      const std::string& checkHelp) {
  addIterationFlags(command, o, "100 tokens", "10 tokens");
  addIntFlag(
      command, "-c,--check", 0, 1 << 20, [o](int n) { o->check = n; },
      checkHelp + "; 0: not (#wrong shows N/A)");
  addRankFlags(command, o,
               "mclConfig_t.transport, e.g. auto, shm or tcp (default "
               "MCL_TRANSPORT, else auto)");
  addReportFlags(command, o, true);
}

int64_t sumOverRanks(int64_t count, mclComm_t comm, int rank) {
  checkMcl(rank, "mclAllReduce",
           mclAllReduce(&count, &count, 1, mclInt64, mclSum, comm, nullptr),
           comm);
  return count;
}

int runTokenBenchmark(const Options& options, TokenBenchmark benchmark,
                      mclComm_t comm, int rank, const std::string& startTime) {
  int nranks = 0;
  int libraryVersion = 0;
  checkMcl(rank, "mclCommCount", mclCommCount(comm, &nranks), comm);
  checkMcl(rank, "mclGetVersion", mclGetVersion(&libraryVersion), comm);
  const DecodeShape& shape = options.decode;
  TokenTable& table = benchmark.table;
  table.nranks = nranks;
  table.transport = transportsOfRank(comm, rank, transportName(options));
  table.warmup = options.warmupIters;

  Progress progress(rank == 0, table.operation,
                    shape.models.size() * shape.batches.size());
  bool wrong = false;
  for (const DecodeModel& model : shape.models)
    for (int batch : shape.batches) {
      progress.step(model.name + " batch " + std::to_string(batch));
      const std::unique_ptr<TokenWorkload> run = benchmark.make(model, batch);
      TokenRow row;
      row.model = model.name;
      row.layers = model.layers;
      row.hidden = model.hidden;
      row.batch = batch;
      row.type = decodeTypeName(shape.type);
      row.callBytes = activationBytes(model, batch, shape.type);
      row.callsPerToken = benchmark.callsPerToken(model);
      row.wrong = -1;
      if (options.check > 0) {
        row.wrong = 0;
        for (int pass = 1; pass <= benchmark.checkPasses; ++pass)
          row.wrong += run->check(pass);
        wrong |= row.wrong > 0;
      }
      for (int t = 0; t < options.warmupIters; ++t) run->token();
      std::vector<double> times;
      for (int t = 0; t < options.iters; ++t) times.push_back(run->token());
      summarizeTokens(times, comm, rank, &row);
      table.rows.push_back(std::move(row));
      if (shape.prompt > 0 && batch == shape.batches.front())
        table.prefill.push_back(
            timePrefill(*run, model, shape.prompt, comm, rank));
    }
  progress.clear();

  int code = kExitOk;
  if (rank == 0) {
    printTokenTable(table);
    if (!writeTokenReports(table, options, libraryVersion, startTime))
      code = kExitFailure;
  }
  return wrong ? kExitWrongData : code;  // the table says where
}

}  // namespace mcl::perf
