// MCL_CHECK=1: ranks compare each collective call before it runs. Matching
// calls run as usual (every collective, in groups and on streams); a call
// that differs on one rank (count, type, op, root, collective, group size)
// fails on every rank with both calls named, and ranks that disagree on
// MCL_CHECK itself fail at init.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <numeric>
#include <string>
#include <vector>

#include "expect_error.h"
#include "multiprocess.h"

namespace mcl::test {
namespace {

mclComm_t initChecked(RankContext& ctx) {
  setenv("MCL_CHECK", "1", 1);
  return initComm(ctx, 20);
}

// Each rank runs `mine` (a call that may differ by rank); all must fail
// with mclInvalidUsage naming both calls, and the next call must fail too
// (the communicator is failed: its ranks stopped at different calls).
void expectMismatch(RankContext& ctx, mclComm_t comm,
                    const std::function<mclResult_t()>& mine,
                    std::initializer_list<const char*> mentions) {
  expectError(ctx, mine(), mclInvalidUsage, "mismatched call", mentions);
  int32_t x = 1;
  if (mclAllReduce(&x, &x, 1, mclInt32, mclSum, comm, nullptr) == mclSuccess)
    ctx.fail("a call after the mismatch succeeded");
  ctx.ok(mclCommAbort(comm), "mclCommAbort");
}

TEST(CallCheck, MatchingCallsOfEveryKindRunAndAreRight) {
  ASSERT_TRUE(runRanks(3, [](RankContext& ctx) {
    mclComm_t comm = initChecked(ctx);
    if (comm == nullptr) return;
    const int n = ctx.nranks();
    std::vector<float> in(1000, static_cast<float>(ctx.rank() + 1));
    std::vector<float> out(1000 * static_cast<size_t>(n), -1.0f);
    ctx.ok(mclAllReduce(in.data(), out.data(), 1000, mclFloat32, mclSum, comm,
                        nullptr),
           "mclAllReduce");
    if (out[999] != 6.0f) ctx.fail("all-reduce gave %f", out[999]);
    ctx.ok(mclAllGather(in.data(), out.data(), 1000, mclFloat32, comm, nullptr),
           "mclAllGather");
    if (out[2999] != 3.0f) ctx.fail("all-gather gave %f", out[2999]);
    ctx.ok(
        mclBroadcast(in.data(), out.data(), 10, mclFloat32, 2, comm, nullptr),
        "mclBroadcast");
    if (out[0] != 3.0f) ctx.fail("broadcast gave %f", out[0]);
    ctx.ok(mclReduce(in.data(), out.data(), 10, mclFloat32, mclMax, 1, comm,
                     nullptr),
           "mclReduce");
    ctx.ok(mclReduceScatter(out.data(), in.data(), 100, mclFloat32, mclSum,
                            comm, nullptr),
           "mclReduceScatter");
    ctx.ok(mclAlltoAll(out.data(), out.data() + 300, 100, mclFloat32, comm,
                       nullptr),
           "mclAlltoAll");
    ctx.ok(mclBarrier(comm, nullptr), "mclBarrier");
    // A group of two collectives and a send/receive pair (not compared).
    std::vector<int32_t> a(64, ctx.rank()), b(64), c(64, 0);
    const int next = (ctx.rank() + 1) % n, prev = (ctx.rank() + n - 1) % n;
    ctx.ok(mclGroupStart(), "mclGroupStart");
    mclAllReduce(a.data(), b.data(), 64, mclInt32, mclSum, comm, nullptr);
    mclSend(a.data(), 64, mclInt32, next, comm, nullptr);
    mclRecv(c.data(), 64, mclInt32, prev, comm, nullptr);
    mclAllReduce(a.data(), a.data(), 64, mclInt32, mclMax, comm, nullptr);
    ctx.ok(mclGroupEnd(), "mclGroupEnd");
    if (b[63] != 3 || a[0] != 2 || c[0] != prev)
      ctx.fail("group gave %d %d %d", b[63], a[0], c[0]);
    // On a stream, after the blocking calls.
    mclStream_t stream = nullptr;
    ctx.ok(mclStreamCreate(&stream), "mclStreamCreate");
    for (int i = 0; i < 20; ++i)
      mclAllReduce(b.data(), b.data(), 64, mclInt32, mclMax, comm, stream);
    ctx.ok(mclStreamSynchronize(stream), "mclStreamSynchronize");
    mclStreamDestroy(stream);
    expectAllReduceWorks(ctx, comm, "checked calls");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  }));
}

TEST(CallCheck, CountThatDiffersFailsOnEveryRankNamingBothCalls) {
  ASSERT_TRUE(runRanks(3, [](RankContext& ctx) {
    mclComm_t comm = initChecked(ctx);
    if (comm == nullptr) return;
    expectAllReduceWorks(ctx, comm, "init");
    std::vector<float> buf(1024, 1.0f);
    const size_t count = ctx.rank() == 2 ? 512 : 1024;
    expectMismatch(ctx, comm,
                   [&] {
                     return mclAllReduce(buf.data(), buf.data(), count,
                                         mclFloat32, mclSum, comm, nullptr);
                   },
                   {"MCL_CHECK", "collective #2 on this communicator",
                    "rank 0 calls all-reduce(count 1024, float, sum)",
                    "rank 2 calls all-reduce(count 512, float, sum)"});
  }));
}

TEST(CallCheck, TypeOpRootAndCollectiveAreCompared) {
  struct Case {
    const char* name;
    std::function<mclResult_t(int rank, void* buf, mclComm_t)> call;
    std::vector<const char*> mentions;
  };
  const std::vector<Case> cases = {
      {"type (same bytes)",
       [](int rank, void* buf, mclComm_t comm) {
         return mclAllGather(buf, static_cast<char*>(buf) + 64, 4,
                             rank == 1 ? mclInt32 : mclFloat32, comm, nullptr);
       },
       {"rank 0 calls all-gather(count 4, float)",
        "rank 1 calls all-gather(count 4, int32)"}},
      {"op",
       [](int rank, void* buf, mclComm_t comm) {
         return mclAllReduce(buf, buf, 4, mclFloat32, rank ? mclMax : mclSum,
                             comm, nullptr);
       },
       {"rank 0 calls all-reduce(count 4, float, sum)",
        "rank 1 calls all-reduce(count 4, float, max)"}},
      {"root",
       [](int rank, void* buf, mclComm_t comm) {
         return mclBroadcast(buf, buf, 4, mclFloat32, rank, comm, nullptr);
       },
       {"rank 0 calls broadcast(count 4, float, root 0)",
        "rank 1 calls broadcast(count 4, float, root 1)"}},
      {"collective",
       [](int rank, void* buf, mclComm_t comm) {
         return rank ? mclBarrier(comm, nullptr)
                     : mclReduce(buf, buf, 4, mclFloat32, mclSum, 0, comm,
                                 nullptr);
       },
       {"rank 0 calls reduce(count 4, float, sum, root 0)",
        "rank 1 calls barrier"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(runRanks(2, [&](RankContext& ctx) {
      mclComm_t comm = initChecked(ctx);
      if (comm == nullptr) return;
      std::vector<float> buf(64, 1.0f);
      const int rank = ctx.rank();
      expectError(ctx, c.call(rank, buf.data(), comm), mclInvalidUsage, c.name,
                  {"MCL_CHECK"});
      std::string message = mclGetLastError(comm);
      for (const char* m : c.mentions)
        if (message.find(m) == std::string::npos)
          ctx.fail("%s: message lacks '%s': %s", c.name, m, message.c_str());
      ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
    }));
  }
}

TEST(CallCheck, GroupsOfDifferentSizesFailOnEveryRank) {
  ASSERT_TRUE(runRanks(2, [](RankContext& ctx) {
    mclComm_t comm = initChecked(ctx);
    if (comm == nullptr) return;
    std::vector<int32_t> a(16, 1), b(16, 2);
    expectMismatch(
        ctx, comm,
        [&] {
          mclGroupStart();
          mclAllReduce(a.data(), a.data(), 16, mclInt32, mclSum, comm, nullptr);
          if (ctx.rank() == 0)
            mclAllReduce(b.data(), b.data(), 16, mclInt32, mclSum, comm,
                         nullptr);
          return mclGroupEnd();
        },
        {"rank 0's group has 2 collectives on this communicator, rank 1's 1",
         "(collective 1 of 2 in a group)"});
  }));
}

TEST(CallCheck, MismatchOnAStreamIsReportedBySynchronize) {
  ASSERT_TRUE(runRanks(2, [](RankContext& ctx) {
    mclComm_t comm = initChecked(ctx);
    if (comm == nullptr) return;
    mclStream_t stream = nullptr;
    if (!ctx.ok(mclStreamCreate(&stream), "mclStreamCreate")) return;
    std::vector<int32_t> a(100, 1);
    ctx.ok(
        mclAllReduce(a.data(), a.data(), 100, mclInt32, mclSum, comm, stream),
        "first all-reduce");
    ctx.ok(mclAllReduce(a.data(), a.data(), ctx.rank() ? 99 : 100, mclInt32,
                        mclSum, comm, stream),
           "mismatched all-reduce, queued");
    expectError(ctx, mclStreamSynchronize(stream), mclInvalidUsage,
                "mclStreamSynchronize",
                {"collective #2", "rank 0 calls all-reduce(count 100",
                 "rank 1 calls all-reduce(count 99"});
    mclResult_t async = mclSuccess;
    ctx.ok(mclCommGetAsyncError(comm, &async), "mclCommGetAsyncError");
    if (async != mclInvalidUsage)
      ctx.fail("async error %s", mclGetErrorString(async));
    mclStreamDestroy(stream);
    ctx.ok(mclCommAbort(comm), "mclCommAbort");
  }));
}

TEST(CallCheck, RanksThatDisagreeOnTheCheckFailAtInit) {
  ASSERT_TRUE(runRanks(2, [](RankContext& ctx) {
    setenv("MCL_CHECK", ctx.rank() == 0 ? "1" : "0", 1);
    mclConfig_t config = MCL_CONFIG_INITIALIZER;
    config.timeoutSeconds = 20;
    mclComm_t comm = nullptr;
    expectError(ctx,
                mclCommInitRankConfig(&comm, ctx.nranks(), ctx.id(), ctx.rank(),
                                      &config),
                mclInvalidUsage, "init", {"MCL_CHECK=1", "MCL_CHECK alike"});
  }));
}

}  // namespace
}  // namespace mcl::test
