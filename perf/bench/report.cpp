#include "bench/report.h"

#include <mcl/mcl.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "common/run_metadata.h"

namespace mcl::perf {

namespace {

using nlohmann::ordered_json;

// The host name up to its first dot, as nccl-tests shows it.
std::string shortHost(const std::string& host) {
  return host.substr(0, host.find('.'));
}

// nccl-tests' time column: fewer decimals as the time grows.
std::string timeText(double us) {
  char buf[64];
  if (us >= 10000.0)
    std::snprintf(buf, sizeof buf, "%7.0f", us);
  else if (us >= 100.0)
    std::snprintf(buf, sizeof buf, "%7.1f", us);
  else
    std::snprintf(buf, sizeof buf, "%7.2f", us);
  return buf;
}

ordered_json cellJson(const ResultCell& c) {
  return {{"time_us", c.timeUs},
          {"algbw_gbps", c.algBw},
          {"busbw_gbps", c.busBw},
          {"wrong", c.checked ? ordered_json(c.wrong) : ordered_json()}};
}

// MCL_WIRE_PROTECT as the ranks read it (every rank must set the same).
std::string wireProtect() {
  const char* v = std::getenv("MCL_WIRE_PROTECT");
  return v != nullptr && *v != '\0' ? v : "auto";
}

ordered_json configJson(const Options& o, const RunInfo& info) {
  return {
      {"minbytes", o.minBytes},
      {"maxbytes", o.maxBytes},
      {"stepbytes", o.stepBytes},
      {"stepfactor", o.stepFactor},
      {"iters", o.iters},
      {"warmup_iters", o.warmupIters},
      {"check", o.check},
      {"agg_iters", o.aggIters},
      {"run_cycles", o.runCycles},
      {"blocking", o.blocking},
      {"parallel_init", o.parallelInit},
      {"report_cputime", o.cpuTime},
      {"datatype", o.datatypeArg},
      {"op", o.opArg},
      {"root", o.root},
      {"average", o.average},
      {"transport", info.ranks.empty() ? "" : info.ranks[0].transport},
      {"wire_protect", wireProtect()},
      {"algo", o.algo},
      {"timeout_seconds",
       o.timeoutSeconds > 0 ? ordered_json(o.timeoutSeconds) : ordered_json()},
  };
}

}  // namespace

void Report::printHeader(const RunInfo& info) {
  if (!isPrinter_) return;
  const Options& o = *info.options;
  std::printf("# mcl-perf version %s mcl-headers=%d mcl-library=%d\n",
              versionText(MCL_VERSION_CODE).c_str(), MCL_VERSION_CODE,
              info.libraryVersion);
  std::printf("# Collective test starting: %s\n", collectiveName(o.collective));
  std::printf(
      "# nThread %d nGpus %d minBytes %zu maxBytes %zu step: %zu(%s) warmup "
      "iters: %d iters: %d agg iters: %d validation: %d graph: %d\n",
      1, 1, o.minBytes, o.maxBytes,
      o.stepFactor > 1 ? o.stepFactor : o.stepBytes,
      o.stepFactor > 1 ? "factor" : "bytes", o.warmupIters, o.iters, o.aggIters,
      o.check, 0);
  // What nccl-tests' flags meant in this run, where mcl differs from NCCL.
  std::printf(
      "# mcl: %d ranks, one per process (nThread 1 nGpus 1: each rank is a "
      "process on the CPU); calls synchronous (the NULL stream)%s; time: the "
      "host's clock\n",
      info.nranks, o.aggIters > 1 ? ", -m calls in one group" : "");
  const std::string protect = wireProtect();
  std::printf("# Wire protection of TCP data: MCL_WIRE_PROTECT=%s%s\n",
              protect.c_str(),
              protect == "auto"
                  ? " (encrypted on LAN and routed paths, clear on cables and "
                    "loopback)"
                  : "");
  if (o.blocking == 1)
    std::printf(
        "# Blocking Enabled: a barrier after each timed iteration, timed\n");
  else if (o.blocking == 3)
    std::printf(
        "# Blocking Enabled: a barrier after each timed iteration, not "
        "timed\n");
  if (o.runCycles != 1)
    std::printf("# Run cycles: %s\n",
                o.runCycles == 0 ? "until interrupted"
                                 : std::to_string(o.runCycles).c_str());
  std::printf("#\n");
  std::printf("# Using ranks\n");
  bool emulated = false;
  for (const RankInfo& r : info.ranks) {
    std::printf("#  Rank %2d Pid %6ld on %10s transport %s\n", r.rank, r.pid,
                shortHost(r.host).c_str(), r.transport.c_str());
    emulated |= r.transport.find("emulated") != std::string::npos;
  }
  if (emulated)
    std::printf(
        "# RDMA runs on the EMULATED Thunderbolt fabric "
        "(MCL_RDMA_PROVIDER=emu): "
        "these figures are not real hardware's\n");
  if (!info.topologyErrors.empty())
    std::printf("#\n%s", info.topologyErrors.c_str());
  std::printf("#\n");
  const char* timeLabel = o.cpuTime ? "cputime" : "time";
  std::printf(
      "# %10s  %12s  %8s  %6s  %6s           out-of-place                  "
      "     in-place          \n",
      "", "", "", "", "");
  std::printf(
      "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s  "
      "%s\n",
      "size", "count", "type", "redop", "root", timeLabel, "algbw", "busbw",
      "#wrong", timeLabel, "algbw", "busbw", "#wrong", "algo");
  std::printf(
      "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n",
      "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
      "(GB/s)", "(GB/s)", "");
}

void Report::beginRow(size_t bytes, size_t count, const char* type,
                      const char* redop, int root, const char* algorithm) {
  if (!isPrinter_) return;
  ResultRow row;
  row.algorithm = algorithm;
  row.bytes = bytes;
  row.count = count;
  row.type = type;
  row.redop = redop;
  row.root = root;
  rows_.push_back(std::move(row));
  cellsInRow_ = 0;
  char rootText[32];
  std::snprintf(rootText, sizeof rootText, "%6i", root);
  std::printf("%12zu  %12zu  %8s  %6s  %6s", bytes, count, type, redop,
              rootText);
}

void Report::addCell(const ResultCell& cell) {
  if (!isPrinter_) return;
  ResultRow& row = rows_.back();
  (cellsInRow_++ == 0 ? row.outOfPlace : row.inPlace) = cell;
  const std::string time = timeText(cell.timeUs);
  if (cell.checked)
    std::printf("  %7s  %6.2f  %6.2f  %5g", time.c_str(), cell.algBw,
                cell.busBw, static_cast<double>(cell.wrong));
  else
    std::printf("  %7s  %6.2f  %6.2f  %5s", time.c_str(), cell.algBw,
                cell.busBw, "N/A");
}

void Report::endRow() {
  if (isPrinter_) std::printf("  %s\n", rows_.back().algorithm.c_str());
}

double Report::peakBusBw() const {
  double peak = 0;
  for (const ResultRow& row : rows_)
    peak = std::max({peak, row.outOfPlace.busBw, row.inPlace.busBw});
  return peak;
}

void Report::printFooter(int64_t errors, double avgBusBw) {
  if (!isPrinter_) return;
  std::printf("# Out of bounds values : %lld %s\n",
              static_cast<long long>(errors), errors ? "FAILED" : "OK");
  std::printf("# Avg bus bandwidth    : %g %s\n", avgBusBw, "");
  std::printf("#\n");
  const char* last = mclGetLastError(nullptr);
  std::printf("%s\n", last ? last : "");
  std::fflush(stdout);
}

bool Report::writeJson(const RunInfo& info, int64_t errors, double avgBusBw,
                       std::string* error) const {
  const Options& o = *info.options;
  ordered_json report = ordered_json::object();
  writeRunMetadata(report, o, collectiveName(o.collective), info.libraryVersion,
                   info.startTime);
  report["hostname"] = info.ranks.empty() ? "" : info.ranks[0].host;
  report["nranks"] = info.nranks;
  report["config"] = configJson(o, info);
  ordered_json ranks = ordered_json::array();
  for (const RankInfo& r : info.ranks)
    ranks.push_back({{"rank", r.rank},
                     {"pid", r.pid},
                     {"hostname", r.host},
                     {"transport", r.transport}});
  report["ranks"] = std::move(ranks);
  // mcl's buffers (after the run: the staging peak counts) and the
  // largest rank's resident set.
  report["memory"] = {{"library", info.memoryJson.empty()
                                      ? ordered_json()
                                      : ordered_json::parse(info.memoryJson)},
                      {"peak_resident_bytes", info.peakResidentBytes}};
  // The cluster and the tuner's model the rows were measured on; parsed as
  // nlohmann::json, which sorts the keys, as this report has always had
  // them.
  report["topology"] =
      info.topologyJson.empty()
          ? ordered_json()
          : ordered_json(nlohmann::json::parse(info.topologyJson));
  ordered_json results = ordered_json::array();
  for (const ResultRow& row : rows_)
    results.push_back({{"size", row.bytes},
                       {"count", row.count},
                       {"type", row.type},
                       {"redop", row.redop},
                       {"root", row.root},
                       {"algorithm", row.algorithm},
                       {"out_of_place", cellJson(row.outOfPlace)},
                       {"in_place", cellJson(row.inPlace)}});
  report["results"] = std::move(results);
  report["out_of_bounds"] = {{"count", errors}, {"ok", errors == 0}};
  report["avg_bus_bandwidth_gbps"] = avgBusBw;
  return writeReportFile(o.jsonPath, reportText(report), error);
}

}  // namespace mcl::perf
