// A communicator's life: queries, barrier, finalize and destroy (which wait
// for queued work), abort from another thread, a peer that dies mid-call,
// and 1000 init/destroy cycles per transport that leak no descriptors,
// threads, shared memory or heap.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "baton.h"
#include "expect_error.h"
#include "init_destroy_cycles.h"
#include "multiprocess.h"

namespace mcl::test {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kBound = std::chrono::seconds(30);
constexpr int kTimeout = 5;

TEST(Lifecycle, CountAndUserRank) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    int count = -1, rank = -1;
    ctx.ok(mclCommCount(comm, &count), "mclCommCount");
    ctx.ok(mclCommUserRank(comm, &rank), "mclCommUserRank");
    if (count != ctx.nranks() || rank != ctx.rank())
      ctx.fail("count %d rank %d, expected %d and %d", count, rank,
               ctx.nranks(), ctx.rank());
    mclResult_t async = mclInternalError;
    ctx.ok(mclCommGetAsyncError(comm, &async), "mclCommGetAsyncError");
    if (async != mclSuccess)
      ctx.fail("healthy comm has async error %s", mclGetErrorString(async));
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(3, body, kBound));
}

// Rank 2 sleeps 1 s before the barrier: the others cannot leave it
// before rank 2 arrives. They leave the aligning barrier at moments apart
// (more so on a busy machine), so half of the sleep is what is asked.
TEST(Lifecycle, BarrierWaitsForTheLastRank) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    ctx.ok(mclBarrier(comm, nullptr), "aligning barrier");
    auto start = Clock::now();
    if (ctx.rank() == 2)
      std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    ctx.ok(mclBarrier(comm, nullptr), "mclBarrier");
    double took = secondsSince(start);
    if (took < 0.5)
      ctx.fail("left the barrier after %.3f s, before the late rank came",
               took);
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(3, body, kBound));
}

TEST(Lifecycle, OperationAfterFinalizeIsInvalidUsage) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    expectAllReduceWorks(ctx, comm, "init");
    if (!ctx.ok(mclCommFinalize(comm), "mclCommFinalize")) return;
    int32_t x = 1, y = 0;
    expectError(ctx, mclAllReduce(&x, &y, 1, mclInt32, mclSum, comm, nullptr),
                mclInvalidUsage, "all-reduce after finalize",
                {"mclAllReduce", "finalized"});
    expectError(ctx, mclBarrier(comm, nullptr), mclInvalidUsage,
                "barrier after finalize", {"finalized"});
    int count = 0;
    ctx.ok(mclCommCount(comm, &count), "mclCommCount after finalize");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy after finalize");
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

// Rank 0 queues two all-reduces on a stream, then finalizes (or destroys)
// at once; rank 1 joins them late. Both operations were issued before
// finalize, so both must complete.
void queuedThenClose(RankContext& ctx, bool destroy) {
  mclComm_t comm = initComm(ctx, kTimeout);
  if (comm == nullptr) return;
  int32_t a = ctx.rank() + 1, b = 10 * (ctx.rank() + 1);
  if (ctx.rank() == 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ctx.ok(mclAllReduce(&a, &a, 1, mclInt32, mclSum, comm, nullptr), "first");
    ctx.ok(mclAllReduce(&b, &b, 1, mclInt32, mclSum, comm, nullptr), "second");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  } else {
    mclStream_t stream = nullptr;
    if (!ctx.ok(mclStreamCreate(&stream), "mclStreamCreate")) return;
    ctx.ok(mclAllReduce(&a, &a, 1, mclInt32, mclSum, comm, stream), "first");
    ctx.ok(mclAllReduce(&b, &b, 1, mclInt32, mclSum, comm, stream), "second");
    if (destroy) {
      ctx.ok(mclCommDestroy(comm), "mclCommDestroy with queued operations");
    } else {
      ctx.ok(mclCommFinalize(comm), "mclCommFinalize with queued operations");
    }
    ctx.ok(mclStreamSynchronize(stream), "mclStreamSynchronize");
    if (!destroy) ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
    ctx.ok(mclStreamDestroy(stream), "mclStreamDestroy");
  }
  if (a != 3 || b != 30)
    ctx.fail("queued all-reduces gave %d and %d, expected 3 and 30", a, b);
}

TEST(Lifecycle, FinalizeCompletesQueuedOperations) {
  EXPECT_TRUE(runRanks(
      2, [](RankContext& ctx) { queuedThenClose(ctx, false); }, kBound));
}

TEST(Lifecycle, DestroyCompletesQueuedOperations) {
  EXPECT_TRUE(runRanks(
      2, [](RankContext& ctx) { queuedThenClose(ctx, true); }, kBound));
}

// Rank 0 blocks in an all-reduce rank 1 never calls; another thread aborts
// the communicator, and the blocked call returns mclRemoteError at once.
TEST(Lifecycle, AbortFromAnotherThreadUnblocksACollective) {
  Baton baton;
  auto body = [&](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, 30);
    if (comm == nullptr) return;
    if (ctx.rank() == 1) {
      // Outlive rank 0's abort, so its call cannot fail for our exit.
      if (!baton.await("rank 0 checked its abort"))
        ctx.fail("rank 0 did not finish within 60 s");
      ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
      return;
    }
    Clock::time_point aborted;
    mclResult_t abortResult = mclInternalError;
    std::thread aborter([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      aborted = Clock::now();
      abortResult = mclCommAbort(comm);
    });
    std::vector<float> x(1000, 1.0f);
    mclResult_t r = mclAllReduce(x.data(), x.data(), x.size(), mclFloat, mclSum,
                                 comm, nullptr);
    auto returned = Clock::now();
    aborter.join();
    double late = std::chrono::duration<double>(returned - aborted).count();
    expectError(ctx, r, mclRemoteError, "all-reduce during mclCommAbort",
                {"abort"});
    // At once: milliseconds on a quiet machine, against the 30-s timeout.
    if (late > 10)
      ctx.fail("the blocked call returned %.1f s after mclCommAbort", late);
    if (abortResult != mclSuccess)
      ctx.fail("mclCommAbort returned %s", mclGetErrorString(abortResult));
    int count = 0;
    expectError(ctx, mclCommCount(comm, &count), mclInvalidArgument,
                "mclCommCount after abort", {"not a live communicator"});
    baton.pass("rank 0 checked its abort");
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

// Rank 1 stays alive but skips an all-reduce: rank 0 times out after its
// 1 s timeout, naming rank 1, and the error sticks.
TEST(Lifecycle, CollectiveTimeoutNamesThePeer) {
  Baton baton;
  auto body = [&](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, 1);
    if (comm == nullptr) return;
    if (ctx.rank() == 1) {
      // Alive and in no call until rank 0 has seen all it should.
      if (!baton.await("rank 0 timed out"))
        ctx.fail("rank 0 did not time out within 60 s");
      ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
      return;
    }
    auto start = Clock::now();
    int32_t x = 1;
    expectError(ctx, mclAllReduce(&x, &x, 1, mclInt32, mclSum, comm, nullptr),
                mclTimeout, "all-reduce rank 1 skips",
                {"rank 1", "no progress"});
    double took = secondsSince(start);
    // Not before the timeout; after it by what a busy machine may add.
    if (took < 0.9 || took > 6)
      ctx.fail("timed out after %.1f s, timeout 1 s", took);
    mclResult_t async = mclSuccess;
    ctx.ok(mclCommGetAsyncError(comm, &async), "mclCommGetAsyncError");
    if (async != mclTimeout)
      ctx.fail("async error is %s, expected mclTimeout",
               mclGetErrorString(async));
    expectError(ctx, mclBarrier(comm, nullptr), mclTimeout,
                "barrier after a timeout (sticky error)", {"rank 1"});
    baton.pass("rank 0 timed out");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

// Rank 1's process is killed (SIGKILL) while rank 0 waits for it in an
// all-reduce. Rank 1 runs in a grandchild so the harness does not count the
// signal as a failure of the test. Rank 0 must hear of it long before its
// 30 s timeout, with rank 1 named, and the error must stick.
TEST(Lifecycle, KilledPeerIsReportedQuickly) {
  auto body = [](RankContext& ctx) {
    if (ctx.rank() == 1) {
      pid_t pid = fork();
      if (pid == 0) {
        alarm(20);  // never outlive the test, whatever happens
        mclConfig_t config = MCL_CONFIG_INITIALIZER;
        config.timeoutSeconds = 10;
        mclComm_t comm = nullptr;
        if (mclCommInitRankConfig(&comm, 2, ctx.id(), 1, &config) != mclSuccess)
          _exit(3);
        float x = 1;
        if (mclAllReduce(&x, &x, 1, mclFloat, mclSum, comm, nullptr) !=
            mclSuccess)
          _exit(4);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        raise(SIGKILL);
        _exit(5);
      }
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        ctx.fail("rank 1's process ended with status 0x%x before its kill",
                 status);
      return;
    }
    mclComm_t comm = initComm(ctx, 30);
    if (comm == nullptr) return;
    float x = 1;
    ctx.ok(mclAllReduce(&x, &x, 1, mclFloat, mclSum, comm, nullptr), "first");
    auto start = Clock::now();
    std::vector<float> big(100000, 1.0f);
    mclResult_t r = mclAllReduce(big.data(), big.data(), big.size(), mclFloat,
                                 mclSum, comm, nullptr);
    double took = secondsSince(start);
    expectError(ctx, r, mclRemoteError, "all-reduce with a killed peer",
                {"rank 1", "gone"});
    if (took > 15) ctx.fail("the dead peer was noticed after %.1f s", took);
    mclResult_t async = mclSuccess;
    ctx.ok(mclCommGetAsyncError(comm, &async), "mclCommGetAsyncError");
    if (async != mclRemoteError)
      ctx.fail("async error is %s, expected mclRemoteError",
               mclGetErrorString(async));
    else
      expectError(ctx, async, mclRemoteError, "async error", {"rank 1"});
    expectError(ctx, mclBarrier(comm, nullptr), mclRemoteError,
                "barrier after the peer died (sticky error)", {"rank 1"});
    expectError(ctx, mclCommFinalize(comm), mclRemoteError,
                "finalize after the peer died (sticky error)", {"rank 1"});
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

// The same through a stream: rank 1 exits after the first all-reduce, and
// rank 0's queued second one reports it through the stream.
TEST(Lifecycle, ExitedPeerIsReportedThroughTheStream) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, 30);
    if (comm == nullptr) return;
    float x = 1;
    ctx.ok(mclAllReduce(&x, &x, 1, mclFloat, mclSum, comm, nullptr), "first");
    if (ctx.rank() == 1) _exit(0);  // gone, without destroying anything
    mclStream_t stream = nullptr;
    if (!ctx.ok(mclStreamCreate(&stream), "mclStreamCreate")) return;
    auto start = Clock::now();
    ctx.ok(mclAllReduce(&x, &x, 1, mclFloat, mclSum, comm, stream), "queue");
    expectError(ctx, mclStreamSynchronize(stream), mclRemoteError,
                "mclStreamSynchronize with an exited peer", {"rank 1"});
    if (secondsSince(start) > 15)
      ctx.fail("the exited peer was noticed after %.1f s", secondsSince(start));
    ctx.ok(mclStreamQuery(stream), "mclStreamQuery after synchronize");
    mclResult_t async = mclSuccess;
    ctx.ok(mclCommGetAsyncError(comm, &async), "mclCommGetAsyncError");
    if (async != mclRemoteError)
      ctx.fail("async error is %s", mclGetErrorString(async));
    ctx.ok(mclStreamDestroy(stream), "mclStreamDestroy");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

#if defined(__linux__)  // reads /proc and /dev/shm
// 1000 communicators over shared memory and over TCP, built and freed in
// turn in the same two processes: no descriptor, thread, mapping, /dev/shm
// segment or (sanitized builds) memory may outlive them. The emulated RDMA
// fabric's are in rdma_lifecycle_test.cpp.
class ThousandInitDestroyCycles : public ::testing::TestWithParam<const char*> {
};

TEST_P(ThousandInitDestroyCycles, LeakNothing) {
  const std::string transport = GetParam();
  InitDestroyCycles run;
  run.setup = [transport] { setenv("MCL_TRANSPORT", transport.c_str(), 1); };
  run.mapsSegments = transport == "shm";
  run.timeoutSeconds = kTimeout;
  expectInitDestroyCyclesLeakNothing(run);
}

INSTANTIATE_TEST_SUITE_P(Lifecycle, ThousandInitDestroyCycles,
                         ::testing::Values("shm", "tcp"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           return std::string(i.param);
                         });
#endif

}  // namespace
}  // namespace mcl::test
