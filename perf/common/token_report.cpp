#include "common/token_report.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "common/run_metadata.h"

namespace mcl::perf {

namespace {

double callsPerSecond(const TokenRow& r) {
  return r.medianUs > 0 ? r.callsPerToken * 1e6 / r.medianUs : 0;
}

double tokensPerSecond(const TokenRow& r) {
  return r.medianUs > 0 ? 1e6 / r.medianUs : 0;
}

std::string wrongText(const TokenRow& r) {
  return r.wrong < 0 ? "N/A" : std::to_string(r.wrong);
}

std::string csvText(const TokenTable& table) {
  std::string text =
      "model,layers,hidden,batch,type,call_bytes,calls_per_token,tokens,"
      "min_us,median_us,p99_us,us_per_call,calls_per_s,tokens_per_s,wrong\n";
  char line[512];
  for (const TokenRow& r : table.rows) {
    std::snprintf(line, sizeof line,
                  "%s,%d,%d,%d,%s,%zu,%d,%d,%.3f,%.3f,%.3f,%.4f,%.1f,%.2f,%s\n",
                  r.model.c_str(), r.layers, r.hidden, r.batch, r.type.c_str(),
                  r.callBytes, r.callsPerToken, r.tokens, r.minUs, r.medianUs,
                  r.p99Us, r.medianUs / r.callsPerToken, callsPerSecond(r),
                  tokensPerSecond(r), wrongText(r).c_str());
    text += line;
  }
  return text;
}

nlohmann::ordered_json rowJson(const TokenRow& r) {
  return {{"model", r.model},
          {"layers", r.layers},
          {"hidden", r.hidden},
          {"batch", r.batch},
          {"type", r.type},
          {"call_bytes", r.callBytes},
          {"calls_per_token", r.callsPerToken},
          {"tokens", r.tokens},
          {"min_us", r.minUs},
          {"median_us", r.medianUs},
          {"p99_us", r.p99Us},
          {"us_per_call", r.medianUs / r.callsPerToken},
          {"calls_per_s", callsPerSecond(r)},
          {"tokens_per_s", tokensPerSecond(r)},
          {"wrong", r.wrong < 0 ? nlohmann::ordered_json()
                                : nlohmann::ordered_json(r.wrong)}};
}

}  // namespace

void printTokenTable(const TokenTable& table) {
  std::printf("# mcl-perf %s: %s\n", table.operation.c_str(),
              table.title.c_str());
  std::printf(
      "# %d ranks, transport %s; per token: the time from the first call to "
      "the last, the slowest rank's, over %d tokens after %d untimed\n",
      table.nranks, table.transport.c_str(),
      table.rows.empty() ? 0 : table.rows.front().tokens, table.warmup);
  if (table.transport.find("emulated") != std::string::npos)
    std::printf(
        "# RDMA runs on the EMULATED Thunderbolt fabric "
        "(MCL_RDMA_PROVIDER=emu): these figures are not real hardware's\n");
  std::printf("#\n");
  std::printf("# %-12s %6s %6s %5s %5s %10s %6s %10s %10s %8s %9s %9s %6s\n",
              "model", "layers", "hidden", "batch", "type", "bytes/call",
              "calls", "median", "p99", "per call", "calls/s", "tokens/s",
              "#wrong");
  std::printf("# %-12s %6s %6s %5s %5s %10s %6s %10s %10s %8s %9s %9s %6s\n",
              "", "", "", "", "", "(B)", "/token", "(us)", "(us)", "(us)", "",
              "ceiling", "");
  for (const TokenRow& r : table.rows) {
    // Tenths while they fit the column.
    const double tokens = tokensPerSecond(r);
    const int decimals = tokens < 1e5 ? 1 : 0;
    std::printf(
        "  %-12s %6d %6d %5d %5s %10zu %6d %10.1f %10.1f %8.2f %9.0f %9.*f "
        "%6s\n",
        r.model.c_str(), r.layers, r.hidden, r.batch, r.type.c_str(),
        r.callBytes, r.callsPerToken, r.medianUs, r.p99Us,
        r.medianUs / r.callsPerToken, callsPerSecond(r), decimals, tokens,
        wrongText(r).c_str());
  }
  std::printf(
      "# tokens/s ceiling: what communication alone allows (1 / median); "
      "compute adds to every token\n");
  if (table.prefill.empty()) return;
  std::printf(
      "# prefill: a prompt's %ss in steps of at most %d tokens (each the "
      "token's messages with tokens x hidden elements), the slowest rank's "
      "time, the median of %d\n",
      table.callName.c_str(), kPrefillChunkTokens, kPrefillRuns);
  std::printf("# %-12s %8s %6s %8s %12s\n", "model", "prompt", "steps", "calls",
              "median (ms)");
  for (const PrefillRow& p : table.prefill)
    std::printf("  %-12s %8d %6d %8d %12.2f\n", p.model.c_str(), p.promptTokens,
                p.steps, p.calls, p.medianMs);
}

bool writeTokenReports(const TokenTable& table, const Options& options,
                       int libraryVersion, const std::string& startTime) {
  bool ok = true;
  std::string error;
  if (!options.jsonPath.empty()) {
    nlohmann::ordered_json report = nlohmann::ordered_json::object();
    writeRunMetadata(report, options, table.operation, libraryVersion,
                     startTime);
    report["nranks"] = table.nranks;
    report["transport"] = table.transport;
    report["call"] = table.callName;
    report["warmup_tokens"] = table.warmup;
    if (!table.prefill.empty()) {
      nlohmann::ordered_json prefill = nlohmann::ordered_json::array();
      for (const PrefillRow& p : table.prefill)
        prefill.push_back({{"model", p.model},
                           {"prompt_tokens", p.promptTokens},
                           {"steps", p.steps},
                           {"calls", p.calls},
                           {"median_ms", p.medianMs}});
      report["prefill"] = prefill;
    }
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const TokenRow& r : table.rows) rows.push_back(rowJson(r));
    report["rows"] = rows;
    if (!writeReportFile(options.jsonPath, reportText(report), &error)) {
      std::fprintf(stderr, "mcl-perf: %s\n", error.c_str());
      ok = false;
    }
  }
  if (!options.csvPath.empty() &&
      !writeReportFile(options.csvPath, csvText(table), &error)) {
    std::fprintf(stderr, "mcl-perf: %s\n", error.c_str());
    ok = false;
  }
  return ok;
}

}  // namespace mcl::perf
