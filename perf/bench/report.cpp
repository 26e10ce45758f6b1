#include "bench/report.h"

#include <mcl/mcl.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include <algorithm>
#include <cstdio>

#include "common/json_writer.h"
#include "common/run_metadata.h"

namespace mcl::perf {

namespace {

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

void writeCell(JsonWriter& w, const char* name, const ResultCell& c) {
  w.key(name);
  w.beginObject();
  w.key("time_us");
  w.number(c.timeUs);
  w.key("algbw_gbps");
  w.number(c.algBw);
  w.key("busbw_gbps");
  w.number(c.busBw);
  w.key("wrong");
  if (c.checked)
    w.integer(c.wrong);
  else
    w.null();
  w.endObject();
}

void writeConfig(JsonWriter& w, const Options& o, const RunInfo& info) {
  w.key("config");
  w.beginObject();
  w.key("minbytes");
  w.unsignedInteger(o.minBytes);
  w.key("maxbytes");
  w.unsignedInteger(o.maxBytes);
  w.key("stepbytes");
  w.unsignedInteger(o.stepBytes);
  w.key("stepfactor");
  w.unsignedInteger(o.stepFactor);
  w.key("iters");
  w.integer(o.iters);
  w.key("warmup_iters");
  w.integer(o.warmupIters);
  w.key("check");
  w.integer(o.check);
  w.key("datatype");
  w.string(o.datatypeArg);
  w.key("op");
  w.string(o.opArg);
  w.key("root");
  w.integer(o.root);
  w.key("average");
  w.integer(o.average);
  w.key("transport");
  w.string(info.ranks.empty() ? "" : info.ranks[0].transport);
  w.key("algo");
  w.string(o.algo);
  w.key("timeout_seconds");
  if (o.timeoutSeconds > 0)
    w.integer(o.timeoutSeconds);
  else
    w.null();
  w.endObject();
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
      o.stepFactor > 1 ? "factor" : "bytes", o.warmupIters, o.iters, 1, o.check,
      0);
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
  std::printf("#\n");
  std::printf(
      "# %10s  %12s  %8s  %6s  %6s           out-of-place                  "
      "     in-place          \n",
      "", "", "", "", "");
  std::printf(
      "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s  "
      "%s\n",
      "size", "count", "type", "redop", "root", "time", "algbw", "busbw",
      "#wrong", "time", "algbw", "busbw", "#wrong", "algo");
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
  JsonWriter w;
  w.beginObject();
  writeRunMetadata(w, o, collectiveName(o.collective), info.libraryVersion,
                   info.startTime);
  w.key("hostname");
  w.string(info.ranks.empty() ? "" : info.ranks[0].host);
  w.key("nranks");
  w.integer(info.nranks);
  writeConfig(w, o, info);
  w.key("ranks");
  w.beginArray();
  for (const RankInfo& r : info.ranks) {
    w.beginObject();
    w.key("rank");
    w.integer(r.rank);
    w.key("pid");
    w.integer(r.pid);
    w.key("hostname");
    w.string(r.host);
    w.key("transport");
    w.string(r.transport);
    w.endObject();
  }
  w.endArray();
  // mcl's buffers (after the run: the staging peak counts) and the
  // largest rank's resident set.
  w.key("memory");
  w.beginObject();
  w.key("library");
  if (info.memoryJson.empty())
    w.null();
  else
    w.verbatim(info.memoryJson);
  w.key("peak_resident_bytes");
  w.integer(info.peakResidentBytes);
  w.endObject();
  // The cluster and the tuner's model the rows were measured on.
  w.key("topology");
  if (info.topologyJson.empty())
    w.null();
  else
    w.verbatim(nlohmann::json::parse(info.topologyJson).dump());
  w.key("results");
  w.beginArray();
  for (const ResultRow& row : rows_) {
    w.beginObject();
    w.key("size");
    w.unsignedInteger(row.bytes);
    w.key("count");
    w.unsignedInteger(row.count);
    w.key("type");
    w.string(row.type);
    w.key("redop");
    w.string(row.redop);
    w.key("root");
    w.integer(row.root);
    w.key("algorithm");
    w.string(row.algorithm);
    writeCell(w, "out_of_place", row.outOfPlace);
    writeCell(w, "in_place", row.inPlace);
    w.endObject();
  }
  w.endArray();
  w.key("out_of_bounds");
  w.beginObject();
  w.key("count");
  w.integer(errors);
  w.key("ok");
  w.boolean(errors == 0);
  w.endObject();
  w.key("avg_bus_bandwidth_gbps");
  w.number(avgBusBw);
  w.endObject();

  return writeReportFile(o.jsonPath, w.text(), error);
}

}  // namespace mcl::perf
