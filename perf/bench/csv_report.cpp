// --csv FILE: the table's rows as comma-separated values, for spreadsheets
// and scripts: one header line, then a line per row with both cells. A
// count of wrong elements that was not checked is left empty (N/A in the
// table).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "bench/report.h"

namespace mcl::perf {

namespace {

void writeCell(std::FILE* f, const ResultCell& c) {
  std::fprintf(f, ",%.3f,%.4f,%.4f,", c.timeUs, c.algBw, c.busBw);
  if (c.checked) std::fprintf(f, "%lld", static_cast<long long>(c.wrong));
}

}  // namespace

bool Report::writeCsv(const RunInfo& info, std::string* error) const {
  std::FILE* f = std::fopen(info.options->csvPath.c_str(), "w");
  if (f == nullptr) {
    *error = info.options->csvPath + ": " + std::strerror(errno);
    return false;
  }
  std::fprintf(f,
               "bytes,count,type,redop,root,algorithm,"
               "time_us,algbw_gbps,busbw_gbps,wrong,"
               "inplace_time_us,inplace_algbw_gbps,inplace_busbw_gbps,"
               "inplace_wrong\n");
  for (const ResultRow& r : rows_) {
    std::fprintf(f, "%zu,%zu,%s,%s,%d,%s", r.bytes, r.count, r.type.c_str(),
                 r.redop.c_str(), r.root, r.algorithm.c_str());
    writeCell(f, r.outOfPlace);
    writeCell(f, r.inPlace);
    std::fputc('\n', f);
  }
  const bool ok = std::ferror(f) == 0;
  if (std::fclose(f) != 0 || !ok) {
    *error = info.options->csvPath + ": write failed";
    return false;
  }
  return true;
}

}  // namespace mcl::perf
