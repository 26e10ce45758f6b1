#include "latency/latency_report.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/run_metadata.h"
#include "common/sample_stats.h"

namespace mcl::perf {

namespace {

using nlohmann::ordered_json;

constexpr int kTimeWidth = 9;

std::string timeCell(const RoundTripStats& s, double us) {
  char buf[32];
  if (!s.measured)
    std::snprintf(buf, sizeof buf, "%*s", kTimeWidth, "-");
  else if (us >= 100000.0)
    std::snprintf(buf, sizeof buf, "%*.0f", kTimeWidth, us);
  else if (us >= 1000.0)
    std::snprintf(buf, sizeof buf, "%*.1f", kTimeWidth, us);
  else
    std::snprintf(buf, sizeof buf, "%*.2f", kTimeWidth, us);
  return buf;
}

std::string ratioText(double ratio, int width) {
  char buf[32];
  if (ratio > 0)
    std::snprintf(buf, sizeof buf, "%*.2f", width, ratio);
  else
    std::snprintf(buf, sizeof buf, "%*s", width, "-");
  return buf;
}

std::string hostsText(const LatencyRow& row) {
  return row.hostA == row.hostB ? row.hostA : row.hostA + " <-> " + row.hostB;
}

// "tcp/shm" for each transport the ratios divide by.
std::vector<std::pair<int, std::string>> ratioColumns(
    const LatencyTable& table) {
  std::vector<std::pair<int, std::string>> columns;
  const int ref = ratioReference(table);
  if (ref < 0) return columns;
  for (size_t t = 0; t < table.transports.size(); ++t)
    if (int(t) != ref && table.transports[t].available)
      columns.emplace_back(int(t), table.transports[size_t(ref)].name + "/" +
                                       table.transports[t].name);
  return columns;
}

// The sizes of the table, in the order first met.
std::vector<size_t> sizesOf(const LatencyTable& table) {
  std::vector<size_t> sizes;
  for (const LatencyRow& row : table.rows)
    if (std::find(sizes.begin(), sizes.end(), row.bytes) == sizes.end())
      sizes.push_back(row.bytes);
  return sizes;
}

// The median over the pairs of `value(row)`, for rows of one size where it
// is positive; 0 when there are none.
template <typename Value>
double medianOverPairs(const LatencyTable& table, size_t bytes, Value value) {
  std::vector<double> values;
  for (const LatencyRow& row : table.rows) {
    if (row.bytes != bytes) continue;
    const double v = value(row);
    if (v > 0) values.push_back(v);
  }
  return summarize(values).median;
}

void printSummary(const LatencyTable& table, std::FILE* out) {
  const int ref = ratioReference(table);
  for (size_t bytes : sizesOf(table)) {
    std::fprintf(out, "# Medians over the pairs at %zu B:", bytes);
    const char* separator = " ";
    for (size_t t = 0; t < table.transports.size(); ++t) {
      const double us = medianOverPairs(table, bytes, [&](const LatencyRow& r) {
        return r.stats[t].measured ? r.stats[t].medianUs : 0.0;
      });
      if (us <= 0) continue;
      std::fprintf(out, "%s%s %.2f us", separator,
                   table.transports[t].label().c_str(), us);
      separator = ", ";
    }
    for (const auto& [t, name] : ratioColumns(table)) {
      const double ratio =
          medianOverPairs(table, bytes, [&, column = t](const LatencyRow& r) {
            return medianRatio(r, ref, column);
          });
      if (ratio > 0) std::fprintf(out, "; %s %.2fx", name.c_str(), ratio);
    }
    std::fprintf(out, "\n");
  }
}

ordered_json statsJson(const RoundTripStats& s) {
  if (!s.measured) return nullptr;
  return {{"min", s.minUs},
          {"median", s.medianUs},
          {"p99", s.p99Us},
          {"count", s.roundTrips}};
}

ordered_json ratiosJson(const LatencyTable& table, const LatencyRow& row) {
  const int ref = ratioReference(table);
  ordered_json ratios = ordered_json::object();
  for (const auto& [t, name] : ratioColumns(table)) {
    const double ratio = medianRatio(row, ref, t);
    ratios[name] = ratio > 0 ? ordered_json(ratio) : ordered_json();
  }
  return ratios;
}

}  // namespace

std::string LatencyTransport::label() const {
  return emulated ? name + " (emulated)" : name;
}

int ratioReference(const LatencyTable& table) {
  int measured = 0;
  int last = -1;
  int tcp = -1;
  for (size_t t = 0; t < table.transports.size(); ++t) {
    if (!table.transports[t].available) continue;
    ++measured;
    last = int(t);
    if (table.transports[t].name == "tcp") tcp = int(t);
  }
  if (measured < 2) return -1;
  return tcp >= 0 ? tcp : last;
}

double medianRatio(const LatencyRow& row, int reference, int transport) {
  if (reference < 0 || transport < 0) return 0;
  const RoundTripStats& a = row.stats[size_t(reference)];
  const RoundTripStats& b = row.stats[size_t(transport)];
  if (!a.measured || !b.measured || b.medianUs <= 0) return 0;
  return a.medianUs / b.medianUs;
}

void printLatencyTable(const LatencyTable& table, std::FILE* out) {
  std::fprintf(out,
               "# mcl-perf latency: round trips (there and back) between every "
               "pair of %d ranks, %d per pair, size and transport after %d "
               "untimed; times in us\n",
               table.nranks, table.roundTrips, table.warmup);
  for (const LatencyTransport& t : table.transports) {
    if (t.emulated)
      std::fprintf(out,
                   "# %s runs on the EMULATED Thunderbolt fabric "
                   "(MCL_RDMA_PROVIDER=emu): its figures are the emulator on "
                   "this machine, not Thunderbolt hardware\n",
                   t.name.c_str());
    if (!t.available)
      std::fprintf(out, "# %s: not measured: %s\n", t.name.c_str(),
                   t.note.c_str());
  }
  size_t hostWidth = 5;
  for (const LatencyRow& row : table.rows)
    hostWidth = std::max(hostWidth, hostsText(row).size());
  const auto ratios = ratioColumns(table);
  std::fprintf(out, "#\n# %-11s  %-*s  %10s", "", int(hostWidth), "", "");
  for (const LatencyTransport& t : table.transports)
    if (t.available)
      std::fprintf(out, "  %*s", 2 * kTimeWidth + 1, t.label().c_str());
  std::fprintf(out, "\n# %-11s  %-*s  %10s", "ranks", int(hostWidth), "hosts",
               "size (B)");
  for (const LatencyTransport& t : table.transports)
    if (t.available)
      std::fprintf(out, "  %*s %*s", kTimeWidth, "median", kTimeWidth, "p99");
  for (const auto& column : ratios)
    std::fprintf(out, "  %9s", column.second.c_str());
  std::fprintf(out, "\n");
  const int ref = ratioReference(table);
  for (const LatencyRow& row : table.rows) {
    std::fprintf(out, "  %3d <-> %-3d  %-*s  %10zu", row.rankA, row.rankB,
                 int(hostWidth), hostsText(row).c_str(), row.bytes);
    for (size_t t = 0; t < row.stats.size(); ++t) {
      const RoundTripStats& s = row.stats[t];
      if (table.transports[t].available)
        std::fprintf(out, "  %s %s", timeCell(s, s.medianUs).c_str(),
                     timeCell(s, s.p99Us).c_str());
    }
    for (const auto& column : ratios)
      std::fprintf(out, "  %s",
                   ratioText(medianRatio(row, ref, column.first), 9).c_str());
    std::fprintf(out, "\n");
  }
  std::fprintf(out, "#\n");
  printSummary(table, out);
  std::fflush(out);
}

std::string latencyJson(const LatencyTable& table, const Options& options,
                        int libraryVersion, const std::string& startTime) {
  ordered_json report = ordered_json::object();
  writeRunMetadata(report, options, "latency", libraryVersion, startTime);
  report["nranks"] = table.nranks;
  report["round_trips"] = table.roundTrips;
  report["warmup"] = table.warmup;
  ordered_json transports = ordered_json::array();
  for (const LatencyTransport& t : table.transports)
    transports.push_back({{"name", t.name},
                          {"label", t.label()},
                          {"emulated", t.emulated},
                          {"available", t.available},
                          {"note", t.note}});
  report["transports"] = std::move(transports);
  ordered_json rows = ordered_json::array();
  for (const LatencyRow& row : table.rows) {
    ordered_json roundTrip = ordered_json::object();
    for (size_t t = 0; t < table.transports.size(); ++t)
      roundTrip[table.transports[t].name] = statsJson(row.stats[t]);
    rows.push_back({{"ranks", ordered_json::array({row.rankA, row.rankB})},
                    {"hosts", ordered_json::array({row.hostA, row.hostB})},
                    {"bytes", row.bytes},
                    {"round_trip_us", std::move(roundTrip)},
                    {"ratios", ratiosJson(table, row)}});
  }
  report["rows"] = std::move(rows);
  return reportText(report);
}

std::string latencyCsv(const LatencyTable& table) {
  std::string text = "rank_a,rank_b,host_a,host_b,bytes";
  for (const LatencyTransport& t : table.transports)
    text += "," + t.name + "_median_us," + t.name + "_p99_us";
  const auto ratios = ratioColumns(table);
  for (const auto& column : ratios) text += "," + column.second;
  text += "\n";
  const int ref = ratioReference(table);
  char buf[64];
  for (const LatencyRow& row : table.rows) {
    text += std::to_string(row.rankA) + "," + std::to_string(row.rankB) + "," +
            row.hostA + "," + row.hostB + "," + std::to_string(row.bytes);
    for (const RoundTripStats& s : row.stats) {
      if (s.measured) {
        std::snprintf(buf, sizeof buf, ",%.3f,%.3f", s.medianUs, s.p99Us);
        text += buf;
      } else {
        text += ",,";
      }
    }
    for (const auto& column : ratios) {
      const double ratio = medianRatio(row, ref, column.first);
      text += ",";
      if (ratio > 0) {
        std::snprintf(buf, sizeof buf, "%.3f", ratio);
        text += buf;
      }
    }
    text += "\n";
  }
  return text;
}

}  // namespace mcl::perf
