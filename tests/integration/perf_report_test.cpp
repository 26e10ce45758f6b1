// mcl-perf's reports read back: the CSV file (--csv) holds the same rows as
// the printed table, cell for cell; a bad path is refused before any rank
// starts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "build_paths.h"
#include "command_run.h"

namespace mcl::test {
namespace {

const std::string kPerfPath = mcl::testing::perfPath();

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, sep)) fields.push_back(field);
  if (!line.empty() && line.back() == sep) fields.emplace_back();
  return fields;
}

// The table's data rows, as whitespace-separated columns.
std::vector<std::vector<std::string>> tableRows(const std::string& output) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::vector<std::string> cols;
    for (std::string c; in >> c;) cols.push_back(c);
    if (cols.size() == 14 &&
        std::isdigit(static_cast<unsigned char>(cols[0][0])))
      rows.push_back(cols);
  }
  return rows;
}

TEST(PerfReport, CsvHoldsTheTablesRows) {
  const std::string path = ::testing::TempDir() + "mcl_perf_rows.csv";
  CommandRun run = runShell(kPerfPath +
                            " allreduce -np 2 -b 8 -e 64K -f 8 -n 3 -w 1 "
                            "-d float -o all --csv " +
                            path);
  ASSERT_EQ(run.status, 0) << run.output;
  const auto table = tableRows(run.output);
  // 5 sizes x 6 ops (sum, prod, max, min, avg, mulsum: nccl-tests' all).
  ASSERT_EQ(table.size(), 5u * 6u) << run.output;

  std::ifstream in(path);
  std::string header;
  ASSERT_TRUE(std::getline(in, header));
  EXPECT_EQ(header,
            "bytes,count,type,redop,root,algorithm,time_us,algbw_gbps,"
            "busbw_gbps,wrong,inplace_time_us,inplace_algbw_gbps,"
            "inplace_busbw_gbps,inplace_wrong");
  size_t i = 0;
  for (std::string line; std::getline(in, line); ++i) {
    ASSERT_LT(i, table.size()) << line;
    const std::vector<std::string> f = split(line, ',');
    ASSERT_EQ(f.size(), 14u) << line;
    const std::vector<std::string>& t = table[i];
    // size count type redop root | time algbw busbw wrong | x4 | algorithm
    EXPECT_EQ(f[0], t[0]);
    EXPECT_EQ(f[1], t[1]);
    EXPECT_EQ(f[2], t[2]);
    EXPECT_EQ(f[3], t[3]);
    EXPECT_EQ(f[4], t[4]);
    EXPECT_EQ(f[5], t[13]);
    // The table rounds what the CSV keeps to three decimals.
    for (auto [csv, col] : {std::pair{6, 5}, std::pair{10, 9}}) {
      const double full = std::stod(f[size_t(csv)]);
      const double shown = std::stod(t[size_t(col)]);
      EXPECT_NEAR(full, shown, std::max(0.01, shown * 1e-3)) << line;
    }
    EXPECT_EQ(f[9], t[8]) << line;
    EXPECT_EQ(f[13], t[12]) << line;
  }
  EXPECT_EQ(i, table.size());
}

TEST(PerfReport, CsvPathThatCannotBeWrittenIsAUsageError) {
  CommandRun run =
      runShell(kPerfPath + " allreduce -np 2 --csv /nonexistent-dir/rows.csv");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("cannot write the CSV report"), std::string::npos)
      << run.output;
  run = runShell(kPerfPath + " tune --csv /tmp/unused.csv");
  EXPECT_EQ(run.status, 2) << run.output;
}

}  // namespace
}  // namespace mcl::test
