// What rank 0 prints, in nccl-tests' exact table format, and the JSON
// report (-J). Other ranks keep nothing and print nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/options.h"

namespace mcl::perf {

struct RankInfo {
  int rank = 0;
  long pid = 0;
  std::string host;  // full host name
  std::string transport;
};

struct RunInfo {
  const Options* options = nullptr;
  int nranks = 0;
  int libraryVersion = 0;  // mclGetVersion
  std::vector<RankInfo> ranks;
  std::string startTime;
  std::string topologyJson;       // mclCommGetTopology's, for the JSON report
  std::string memoryJson;         // its "memory" object, after the run
  std::string topologyErrors;     // "# Topology: ..." lines, or ""
  int64_t peakResidentBytes = 0;  // the largest rank's
};

// One measurement: out of place or in place.
struct ResultCell {
  double timeUs = 0;
  double algBw = 0;  // GB/s
  double busBw = 0;  // GB/s
  bool checked = false;
  int64_t wrong = 0;  // summed over the ranks; meaningful when checked
};

struct ResultRow {
  size_t bytes = 0;
  size_t count = 0;
  std::string type;
  std::string redop;
  int root = -1;
  std::string algorithm;  // mclCommGetAlgorithm's answer
  ResultCell outOfPlace;
  ResultCell inPlace;
};

class Report {
 public:
  explicit Report(bool isPrinter) : isPrinter_(isPrinter) {}

  // The comment lines, the rank list and the column header.
  void printHeader(const RunInfo& info);
  // A row: its first columns, then the out-of-place and the in-place cell;
  // the algorithm used closes the row (a column nccl-tests lacks).
  void beginRow(size_t bytes, size_t count, const char* type, const char* redop,
                int root, const char* algorithm);
  void addCell(const ResultCell& cell);
  void endRow();
  // errors: measurements with wrong elements, counted per rank and summed.
  void printFooter(int64_t errors, double avgBusBw);
  // The highest bus bandwidth of any row (either cell), GB/s.
  double peakBusBw() const;

  // Writes the JSON report to info.options->jsonPath; false with *error
  // set when the file cannot be written.
  bool writeJson(const RunInfo& info, int64_t errors, double avgBusBw,
                 std::string* error) const;
  // Writes every row to info.options->csvPath (csv_report.cpp).
  bool writeCsv(const RunInfo& info, std::string* error) const;

 private:
  bool isPrinter_;
  std::vector<ResultRow> rows_;
  int cellsInRow_ = 0;
};

}  // namespace mcl::perf
