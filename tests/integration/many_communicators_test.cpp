// A long job's pattern: 4 ranks each hold 64 communicators at once (split
// from one) and replace one of them 1000 times, with checked all-reduces
// along the way. Descriptors, threads and mapped segments come back to
// what the 64 took, and to the start once all are destroyed: nothing runs
// out. With too few descriptors for 64, the split that runs out fails on
// every rank naming ulimit -n, and the rest still tears down. Linux only
// (it reads /proc).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "expect_error.h"
#include "multiprocess.h"
#include "process_census.h"

#if defined(__linux__)
namespace mcl::test {
namespace {

constexpr int kLive = 64;

mclComm_t split(RankContext& ctx, mclComm_t world, const char* what) {
  mclComm_t c = nullptr;
  if (!ctx.ok(mclCommSplit(world, 0, ctx.rank(), &c, nullptr), what))
    return nullptr;
  return c;
}

TEST(ManyCommunicators, SixtyFourLiveAndAThousandReplacedLeakNothing) {
  EXPECT_TRUE(runRanks(
      4,
      [](RankContext& ctx) {
        mclComm_t world = initComm(ctx, 60);
        if (world == nullptr) return;
        const ProcessCensus start = settledCensus(nullptr);
        const int segmentsAtStart = mappedSegments();
        std::vector<mclComm_t> live;
        for (int i = 0; i < kLive && !ctx.failed(); ++i)
          live.push_back(split(ctx, world, "split (the first 64)"));
        const ProcessCensus full = settledCensus(nullptr);
        const int segmentsFull = mappedSegments();
        for (int cycle = 0; cycle < 1000 && !ctx.failed(); ++cycle) {
          mclComm_t& slot = live[size_t(cycle % kLive)];
          if (cycle % 50 == 0)
            expectAllReduceWorks(ctx, slot, "a communicator of the 64");
          ctx.ok(mclCommDestroy(slot), "mclCommDestroy");
          slot = split(ctx, world, "split (a replacement)");
        }
        // Every rank counts before any destroys its 64 (their side
        // channels' sockets close on every rank then).
        expectAllReduceWorks(ctx, world, "the replacements");
        const ProcessCensus replaced = settledCensus(&full);
        expectAllReduceWorks(ctx, world, "the census of the 64");
        if (!full.changeTo(replaced).empty() ||
            mappedSegments() != segmentsFull)
          ctx.fail(
              "64 live after 1000 replacements: %s, %d segments "
              "mapped (%d with the first 64)",
              full.changeTo(replaced).c_str(), mappedSegments(), segmentsFull);
        for (mclComm_t c : live)
          if (c != nullptr) ctx.ok(mclCommDestroy(c), "mclCommDestroy");
        // Every rank counts before any destroys the world (its side
        // channel's sockets close on every rank then).
        expectAllReduceWorks(ctx, world, "the 64 destroyed");
        const ProcessCensus end = settledCensus(&start);
        if (!start.changeTo(end).empty() || mappedSegments() != segmentsAtStart)
          ctx.fail("all 64 destroyed: %s, %d segments mapped (%d before)",
                   start.changeTo(end).c_str(), mappedSegments(),
                   segmentsAtStart);
        std::printf(
            "rank %d: %zu descriptors and %zu threads with 64 "
            "communicators, the same after 1000 replacements; %zu "
            "and %zu with none\n",
            ctx.rank(), full.fds, full.threads, end.fds, end.threads);
        std::fflush(stdout);
        expectAllReduceWorks(ctx, world, "the census");
        ctx.ok(mclCommDestroy(world), "mclCommDestroy");
      },
      std::chrono::seconds(280)));
}

TEST(ManyCommunicators, TheLimitReachedFirstIsNamedOnEveryRank) {
  if (underSanitizers())
    GTEST_SKIP() << "UBSan checks memory through a pipe: with no "
                    "descriptors left it reports objects as invalid";
  EXPECT_TRUE(runRanks(4, [](RankContext& ctx) {
    mclComm_t world = initComm(ctx, 30);
    if (world == nullptr) return;
    // Room for a few communicators, not 64.
    rlimit before{};
    getrlimit(RLIMIT_NOFILE, &before);
    rlimit few = before;
    few.rlim_cur = ProcessCensus::take().fds + 40;
    setrlimit(RLIMIT_NOFILE, &few);
    std::vector<mclComm_t> live;
    mclResult_t r = mclSuccess;
    for (int i = 0; i < kLive && r == mclSuccess; ++i) {
      mclComm_t c = nullptr;
      r = mclCommSplit(world, 0, ctx.rank(), &c, nullptr);
      if (r == mclSuccess) live.push_back(c);
    }
    if (r == mclSuccess)
      ctx.fail("64 communicators fit in %llu descriptors",
               static_cast<unsigned long long>(few.rlim_cur));
    else
      expectError(ctx, r, mclSystemError, "the split that ran out",
                  {"Too many open files", "ulimit -n"});
    setrlimit(RLIMIT_NOFILE, &before);
    for (mclComm_t c : live) ctx.ok(mclCommDestroy(c), "mclCommDestroy");
    // The world lost a split half way on some ranks: it is not trusted
    // for more calls, only destroyed.
    mclCommAbort(world);
  }));
}

}  // namespace
}  // namespace mcl::test
#endif
