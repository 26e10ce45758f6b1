// The algorithm table and the tuner through the API and mcl-perf: names,
// the choice every rank makes for a call, the model's predictions (the pick
// is the cheapest), bad arguments, `mcl-perf tune` and `--algo`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "build_paths.h"
#include "command_run.h"
#include "multiprocess.h"

namespace mcl::test {
namespace {

const std::string kPerf = mcl::testing::perfPath();

std::vector<std::string> algorithmsOf(mclFunc_t func) {
  std::vector<std::string> names;
  const char* name = nullptr;
  for (int i = 0; mclGetAlgorithmName(func, i, &name) == mclSuccess && name;
       ++i)
    names.push_back(name);
  return names;
}

TEST(AlgorithmApi, NamesPerCollective) {
  EXPECT_EQ(
      algorithmsOf(mclFuncAllReduce),
      (std::vector<std::string>{"ring", "tree", "direct", "halving_doubling"}));
  EXPECT_EQ(algorithmsOf(mclFuncAllGather),
            (std::vector<std::string>{"ring", "direct"}));
  EXPECT_EQ(algorithmsOf(mclFuncBroadcast),
            (std::vector<std::string>{"chain", "tree"}));
  const char* name = "x";
  EXPECT_EQ(mclGetAlgorithmName(mclNumFuncs, 0, &name), mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("func 6"),
            std::string::npos);
  EXPECT_EQ(mclGetAlgorithmName(mclFuncReduce, -1, &name), mclInvalidArgument);
  EXPECT_EQ(mclGetAlgorithmName(mclFuncReduce, 0, nullptr), mclInvalidArgument);
}

TEST(AlgorithmApi, EveryRankPicksTheCheapestPredictedAlgorithm) {
  EXPECT_TRUE(runRanks(4, [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx);
    if (comm == nullptr) return;
    for (mclFunc_t func : {mclFuncAllReduce, mclFuncAllGather, mclFuncBroadcast,
                           mclFuncReduce, mclFuncReduceScatter})
      for (size_t count = 1; count <= (size_t{1} << 24); count *= 16) {
        const char* pick = nullptr;
        if (!ctx.ok(mclCommGetAlgorithm(comm, func, count, mclFloat32, &pick),
                    "mclCommGetAlgorithm"))
          return;
        double best = 1e300, pickUs = -1;
        for (const std::string& a : algorithmsOf(func)) {
          double us = 0;
          if (!ctx.ok(
                  mclCommPredict(comm, func, a.c_str(), count, mclFloat32, &us),
                  "mclCommPredict"))
            return;
          best = std::min(best, us);
          if (a == pick) pickUs = us;
        }
        if (pickUs != best)
          ctx.fail("func %d count %zu: picked %s at %.2f us, the best is %.2f",
                   int(func), count, pick, pickUs, best);
        // Every rank picks the same: compare the names' first letters and
        // lengths through an all-gather.
        int mine = pick[0] * 1000 + int(std::strlen(pick));
        std::vector<int> all(4);
        ctx.ok(mclAllGather(&mine, all.data(), 1, mclInt32, comm, nullptr),
               "allgather");
        for (int r = 0; r < 4; ++r)
          if (all[size_t(r)] != mine) ctx.fail("rank %d picked differently", r);
      }
    double us = 0;
    if (mclCommPredict(comm, mclFuncAllGather, "tree", 8, mclFloat32, &us) !=
            mclInvalidArgument ||
        std::string(mclGetLastError(comm)).find("ring, direct") ==
            std::string::npos)
      ctx.fail("an unknown algorithm was not refused naming the valid ones");
    if (mclCommGetAlgorithm(comm, mclFuncAllReduce, 8, mclFloat32, nullptr) !=
        mclInvalidArgument)
      ctx.fail("a NULL name was accepted");
    ctx.ok(mclCommDestroy(comm), "destroy");
  }));
}

TEST(AlgorithmApi, TuneMarksItsPickOnEveryRow) {
  CommandRun run = runShell(kPerf + " tune -np 2 -b 8 -e 1M -f 8");
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("link model shm"), std::string::npos) << run.output;
  int rows = 0;
  std::istringstream lines(run.output);
  for (std::string line; std::getline(lines, line);) {
    // Rows start with the size; skip comments and any log line.
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos ||
        !std::isdigit(static_cast<unsigned char>(line[first])))
      continue;
    ++rows;
    // The marked column is the pick named at the end of the row.
    std::istringstream cols(line);
    std::vector<std::string> c;
    for (std::string w; cols >> w;) c.push_back(w);
    int marks = 0;
    for (const std::string& w : c) marks += w.back() == '*';
    EXPECT_EQ(marks, 1) << line;
    const std::vector<std::string> names = algorithmsOf(mclFuncAllReduce);
    for (size_t i = 0; i < names.size(); ++i)
      if (c[i + 1].back() == '*') {
        EXPECT_EQ(names[i], c.back()) << line;
      }
  }
  EXPECT_EQ(rows, 6);  // 8 B to 256 KiB by factors of 8
}

// The model counts the cables of a pair (their bandwidth adds up): the
// fewest between any two ranks, the same on every rank.
TEST(AlgorithmApi, TuneCountsTheWiresOfTheEmulatedFabric) {
  const std::string fixtures = mcl::testing::fixtureDir() + "/rdma/";
  const struct {
    const char* fabric;
    int ranks;
    const char* wires;
  } cases[] = {{"pair2.json", 2, "; 2 wire(s) per pair"},
               {"pair.json", 2, "; 1 wire(s) per pair"},
               {"mesh4_doubled.json", 4, "; 1 wire(s) per pair"}};
  for (const auto& c : cases) {
    CommandRun run =
        runShell("MCL_RDMA_PROVIDER=emu MCL_EMU_FABRIC=" + fixtures + c.fabric +
                 " " + kPerf + " tune -np " + std::to_string(c.ranks) +
                 " --transport rdma -b 8 -e 8");
    ASSERT_EQ(run.status, 0) << run.output;
    EXPECT_NE(run.output.find("link model emulated rdma"), std::string::npos)
        << run.output;
    EXPECT_NE(run.output.find(c.wires), std::string::npos)
        << c.fabric << ": " << run.output;
  }
}

TEST(AlgorithmApi, PerfAlgoAllMeasuresEveryAlgorithmAndChecksThem) {
  CommandRun run =
      runShell(kPerf +
               " allgather -np 3 -b 1K -e 64K -f 64 -n 2 -w 1 -c 1 "
               "--algo all");
  ASSERT_EQ(run.status, 0) << run.output;
  for (const char* algo : {"auto:", " ring\n", " direct\n"})
    EXPECT_NE(run.output.find(algo), std::string::npos) << algo << run.output;
  EXPECT_NE(run.output.find("# Out of bounds values : 0 OK"),
            std::string::npos);
  run = runShell(kPerf + " broadcast -np 2 -b 8 -e 8 --algo ring");
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.output.find("broadcast has no algorithm \"ring\""),
            std::string::npos)
      << run.output;
}

}  // namespace
}  // namespace mcl::test
