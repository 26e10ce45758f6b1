// What `mcl-perf latency` shows: for every pair of ranks and size, the
// round trip over each transport side by side (median and 99th percentile)
// and TCP's time over each other transport's; as a table for people, and
// as JSON and CSV for scripts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/options.h"

namespace mcl::perf {

struct RoundTripStats {
  bool measured = false;  // the transport reaches this pair
  double minUs = 0;
  double medianUs = 0;
  double p99Us = 0;
  int64_t roundTrips = 0;
};

struct LatencyTransport {
  std::string name;       // shm, tcp or rdma
  bool emulated = false;  // rdma on the emulated fabric
  bool available = false;
  std::string note;  // why it was not measured, when it was not

  // "rdma (emulated)" when emulated, else the name.
  std::string label() const;
};

struct LatencyRow {
  int rankA = 0;
  int rankB = 0;
  std::string hostA;
  std::string hostB;
  size_t bytes = 0;
  std::vector<RoundTripStats> stats;  // one per LatencyTable::transports
};

struct LatencyTable {
  int nranks = 0;
  int roundTrips = 0;
  int warmup = 0;
  std::vector<LatencyTransport> transports;
  std::vector<LatencyRow> rows;
};

// The transport the ratios divide by the others: TCP when measured, else
// the last measured; -1 when fewer than two transports were measured.
int ratioReference(const LatencyTable& table);

// reference's median over transport's for one row; 0 when either is
// missing.
double medianRatio(const LatencyRow& row, int reference, int transport);

void printLatencyTable(const LatencyTable& table, std::FILE* out);

std::string latencyJson(const LatencyTable& table, const Options& options,
                        int libraryVersion, const std::string& startTime);

// A header line, then a line per row: ranks, hosts, bytes, each
// transport's median and p99 (empty when not measured), the ratios.
std::string latencyCsv(const LatencyTable& table);

}  // namespace mcl::perf
