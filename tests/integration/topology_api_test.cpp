// The cluster picture through the public API: mclCommGetTopology (size
// query, exact buffer, too small), MCL_TOPO_DUMP_FILE written by rank 0 (and
// a path that cannot be written failing init on every rank), MCL_TOPO_FILE
// that is missing or describes another job.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "expect_error.h"
#include "multiprocess.h"

namespace mcl::test {
namespace {

constexpr auto kTopologyBound = std::chrono::seconds(30);
constexpr int kTopologyTimeout = 5;

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string scratchPath(const char* name) {
  return "/tmp/mcl-topo-test-" + std::to_string(getpid()) + "-" + name;
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos;
       at = text.find(part, at + 1))
    ++n;
  return n;
}

TEST(TopologyApi, GetTopologyDescribesTheJob) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTopologyTimeout);
    if (comm == nullptr) return;
    size_t size = 0;
    ctx.ok(mclCommGetTopology(comm, nullptr, &size), "size query");
    if (size < 100) ctx.fail("topology of %zu bytes", size);
    std::vector<char> text(size, '\x7f');
    size_t exact = size;
    ctx.ok(mclCommGetTopology(comm, text.data(), &exact), "exact buffer");
    std::string json(text.data());
    if (json.size() + 1 != size)
      ctx.fail("%zu bytes, said %zu", json.size(), size);
    for (const char* part : {"\"shape\": \"single\"", "\"hosts\"", "\"links\"",
                             "\"paths\"", "\"transport\": \"shm\""})
      if (json.find(part) == std::string::npos)
        ctx.fail("topology lacks %s:\n%s", part, json.c_str());
    // One host: every pair of the 3 ranks on shared memory.
    if (count(json, "\"transport\": \"shm\"") != 3)
      ctx.fail("expected 3 shm pairs:\n%s", json.c_str());
    std::vector<char> small(size - 1, 'x');
    size_t have = small.size();
    expectError(ctx, mclCommGetTopology(comm, small.data(), &have),
                mclInvalidArgument, "small buffer", {"too small"});
    if (have != size || small[0] != 'x')
      ctx.fail("a refused buffer was written, or size not reported");
    expectError(ctx, mclCommGetTopology(comm, text.data(), nullptr),
                mclInvalidArgument, "NULL size", {"size"});
    expectError(ctx, mclCommGetTopology(nullptr, text.data(), &exact),
                mclInvalidArgument, "NULL comm", {"comm"});
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(3, body, kTopologyBound));
}

TEST(TopologyApi, DumpFileIsWrittenByRankZero) {
  const std::string path = scratchPath("dump.json");
  unlink(path.c_str());
  auto body = [&](RankContext& ctx) {
    setenv("MCL_TOPO_DUMP_FILE", path.c_str(), 1);
    mclComm_t comm = initComm(ctx, kTopologyTimeout);
    if (comm == nullptr) return;
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(2, body, kTopologyBound));
  std::string dump = readAll(path);
  EXPECT_NE(dump.find("\"mcl_topology\": 1"), std::string::npos) << dump;
  EXPECT_NE(dump.find("\"interfaces\""), std::string::npos)
      << "a dump looks at the interfaces even on one host:\n"
      << dump;
  unlink(path.c_str());
}

TEST(TopologyApi, UnwritableDumpFileFailsInitOnEveryRank) {
  auto body = [](RankContext& ctx) {
    setenv("MCL_TOPO_DUMP_FILE", "/nonexistent-dir/topo.json", 1);
    mclComm_t comm = nullptr;
    mclConfig_t config = MCL_CONFIG_INITIALIZER;
    config.timeoutSeconds = kTopologyTimeout;
    mclResult_t r = mclCommInitRankConfig(&comm, ctx.nranks(), ctx.id(),
                                          ctx.rank(), &config);
    if (ctx.rank() == 0)
      expectError(ctx, r, mclSystemError, "rank 0 init",
                  {"MCL_TOPO_DUMP_FILE=/nonexistent-dir/topo.json"});
    else if (r == mclSuccess)
      ctx.fail("rank %d finished init although rank 0 failed", ctx.rank());
  };
  EXPECT_TRUE(runRanks(2, body, kTopologyBound));
}

TEST(TopologyApi, TopologyFileMustExistAndFitTheJob) {
  const std::string path = scratchPath("three.json");
  {
    std::ofstream out(path);
    out << R"({"hosts": [{"id": 0, "name": "a", "ranks": [0, 1, 2]}],
               "links": []})";
  }
  auto body = [&](RankContext& ctx) {
    mclConfig_t config = MCL_CONFIG_INITIALIZER;
    config.timeoutSeconds = kTopologyTimeout;
    mclComm_t comm = nullptr;
    setenv("MCL_TOPO_FILE", "/nonexistent-dir/topo.json", 1);
    // Each rank fails on its own before the others could notice: a fresh
    // id per attempt is not needed, but the ranks must all fail alike.
    expectError(ctx,
                mclCommInitRankConfig(&comm, ctx.nranks(), ctx.id(), ctx.rank(),
                                      &config),
                mclInvalidArgument, "missing file",
                {"MCL_TOPO_FILE=/nonexistent-dir/topo.json"});
  };
  EXPECT_TRUE(runRanks(2, body, kTopologyBound));
  auto wrongJob = [&](RankContext& ctx) {
    mclConfig_t config = MCL_CONFIG_INITIALIZER;
    config.timeoutSeconds = kTopologyTimeout;
    mclComm_t comm = nullptr;
    setenv("MCL_TOPO_FILE", path.c_str(), 1);
    expectError(ctx,
                mclCommInitRankConfig(&comm, ctx.nranks(), ctx.id(), ctx.rank(),
                                      &config),
                mclInvalidUsage, "file for 3 ranks",
                {"describes 3 ranks", "has 2"});
  };
  EXPECT_TRUE(runRanks(2, wrongJob, kTopologyBound));
  unlink(path.c_str());
}

// Each rank reads its own disk: a file one rank lacks, or ranks reading
// different files, fail every rank at once with the same message.
TEST(TopologyApi, RanksMustReadTheSameTopologyFile) {
  const std::string a = scratchPath("a.json");
  const std::string b = scratchPath("b.json");
  const char* fits = R"({"hosts": [{"id": 0, "name": "x", "ranks": [0, 1]}],
                         "links": []})";
  std::ofstream(a) << fits;
  std::ofstream(b) << fits << "\n";  // same cluster, other bytes
  auto attempt = [](RankContext& ctx, const std::string& path, mclResult_t want,
                    std::initializer_list<const char*> says) {
    setenv("MCL_TOPO_FILE", path.c_str(), 1);
    // A timeout far above the bound: failing at once (milliseconds) and
    // failing by the timeout differ on any machine.
    mclConfig_t config = MCL_CONFIG_INITIALIZER;
    config.timeoutSeconds = 30;
    mclComm_t comm = nullptr;
    auto start = std::chrono::steady_clock::now();
    mclResult_t r = mclCommInitRankConfig(&comm, ctx.nranks(), ctx.id(),
                                          ctx.rank(), &config);
    expectError(ctx, r, want, "init", says);
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(15))
      ctx.fail("rank %d took the timeout to fail", ctx.rank());
  };
  EXPECT_TRUE(runRanks(
      2,
      [&](RankContext& ctx) {
        attempt(ctx, ctx.rank() == 1 ? "/nonexistent-dir/t.json" : a,
                mclInvalidArgument, {"rank 1", "/nonexistent-dir/t.json"});
      },
      kTopologyBound));
  EXPECT_TRUE(runRanks(
      2,
      [&](RankContext& ctx) {
        attempt(ctx, ctx.rank() == 1 ? b : a, mclInvalidUsage,
                {"rank 1 reads a different MCL_TOPO_FILE"});
      },
      kTopologyBound));
  unlink(a.c_str());
  unlink(b.c_str());
}

}  // namespace
}  // namespace mcl::test
