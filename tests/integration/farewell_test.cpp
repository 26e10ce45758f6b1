// A rank that gives up on a communicator tells its peers why: one whose
// communicator failed (here: its own, shorter timeout ran out) or that
// aborted it. Peers waiting on it then fail at once with that reason, not
// after their own timeout, and not with a bare "rank r is gone" that
// hides the first failure. Over shared memory, TCP and (emulated) RDMA.
#include <gtest/gtest.h>
#include <mcl/mcl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "baton.h"
#include "build_paths.h"
#include "expect_error.h"
#include "multiprocess.h"

namespace mcl::test {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

mclComm_t initWithTimeout(RankContext& ctx, const char* transport,
                          int timeoutSeconds) {
  setenv("MCL_TRANSPORT", transport, 1);
  if (std::string(transport) == "rdma") {  // the emulated fabric, 3 or 4 Macs
    setenv("MCL_RDMA_PROVIDER", "emu", 1);
    const std::string fabric =
        mcl::testing::fixtureDir() +
        (ctx.nranks() == 4 ? "/rdma/mesh4.json" : "/rdma/ring3.json");
    setenv("MCL_EMU_FABRIC", fabric.c_str(), 1);
  }
  return initComm(ctx, timeoutSeconds);
}

class Farewell : public ::testing::TestWithParam<const char*> {};

TEST_P(Farewell, AbortedRankEndsItsPeersWaitAtOnce) {
  const char* transport = GetParam();
  ASSERT_TRUE(runRanks(3, [&](RankContext& ctx) {
    mclComm_t comm = initWithTimeout(ctx, transport, 60);
    if (comm == nullptr) return;
    if (ctx.rank() == 0) {
      usleep(300 * 1000);
      ctx.ok(mclCommAbort(comm), "mclCommAbort");
      return;
    }
    std::vector<float> data(1 << 16, 1.0f);
    const auto start = Clock::now();
    expectError(ctx,
                mclAllReduce(data.data(), data.data(), data.size(), mclFloat32,
                             mclSum, comm, nullptr),
                mclRemoteError, "all-reduce with an aborted rank 0",
                {"peer rank 0", "aborted the communicator (mclCommAbort)"});
    if (secondsSince(start) > 10)
      ctx.fail("took %.1f s (the timeout is 60 s)", secondsSince(start));
    mclCommAbort(comm);
  }));
}

TEST_P(Farewell, FailedRankTellsItsPeersTheFirstFailure) {
  const char* transport = GetParam();
  Baton baton;
  ASSERT_TRUE(runRanks(3, [&](RankContext& ctx) {
    // Rank 0 gives up after 1 s without progress; the others would wait 60.
    mclComm_t comm = initWithTimeout(ctx, transport, ctx.rank() == 0 ? 1 : 60);
    if (comm == nullptr) return;
    std::vector<float> data(1 << 16, 1.0f);
    if (ctx.rank() == 0) {
      expectError(ctx,
                  mclAllReduce(data.data(), data.data(), data.size(),
                               mclFloat32, mclSum, comm, nullptr),
                  mclTimeout, "rank 0's all-reduce", {"MCL_TIMEOUT"});
      baton.pass("rank 0 gave up");
      // Alive, its communicator failed, not closed, until the others saw it.
      for (const char* other : {"rank 1 done", "rank 2 done"})
        if (!baton.await(other)) ctx.fail("%s: not within 60 s", other);
      mclCommAbort(comm);
      return;
    }
    if (!baton.await("rank 0 gave up"))  // come after rank 0 gave up
      ctx.fail("rank 0 did not give up within 60 s");
    const auto start = Clock::now();
    expectError(ctx,
                mclAllReduce(data.data(), data.data(), data.size(), mclFloat32,
                             mclSum, comm, nullptr),
                mclRemoteError, "all-reduce after rank 0 gave up",
                {"peer rank 0", "gave up", "no progress for 1 s"});
    // At once (milliseconds on a quiet machine), not after the timeout.
    if (secondsSince(start) > 10)
      ctx.fail("took %.1f s (the timeout is 60 s)", secondsSince(start));
    baton.pass("rank " + std::to_string(ctx.rank()) + " done");
    mclCommAbort(comm);
  }));
}

// Rank 1 stalls (alive, in no call) past the timeout; ranks 0 and 2 time
// out within moments of each other, each maybe waiting only on the other.
// Both must name rank 1: a rank that timed out listens a moment for the
// farewell of the rank it waited on before it blames that one.
TEST_P(Farewell, StalledRankIsNamedByEveryRankThatWaits) {
  const char* transport = GetParam();
  Baton baton;
  ASSERT_TRUE(runRanks(3, [&](RankContext& ctx) {
    mclComm_t comm = initWithTimeout(ctx, transport, 1);
    if (comm == nullptr) return;
    std::vector<float> data(1 << 16, 1.0f);
    if (ctx.rank() == 1) {
      for (const char* other : {"rank 0 done", "rank 2 done"})
        if (!baton.await(other)) ctx.fail("%s: not within 60 s", other);
      mclCommAbort(comm);
      return;
    }
    // A few calls that rank 1 never joins: the two others run ahead into
    // the next and wait on each other as well as on rank 1.
    mclResult_t r = mclSuccess;
    for (int i = 0; i < 3 && r == mclSuccess; ++i)
      r = mclAllReduce(data.data(), data.data(), data.size() / 16, mclFloat32,
                       mclSum, comm, nullptr);
    const std::string message = mclGetLastError(comm);
    if (r != mclTimeout && r != mclRemoteError)
      ctx.fail("code %d: %s", static_cast<int>(r), message.c_str());
    else if (message.find("rank 1") == std::string::npos)
      ctx.fail("the error does not name rank 1: %s", message.c_str());
    baton.pass("rank " + std::to_string(ctx.rank()) + " done");
    mclCommAbort(comm);
  }));
}

// Rank 2 of 4 stalls. Rank 0 (timeout 1 s) gives up first, waiting on a
// neighbour in the ring; the other neighbour hears rank 0's farewell, which
// names a bystander and not rank 2. Every error must still lead to rank 2:
// a rank reports what it waits on itself beside the reason it heard.
TEST_P(Farewell, EveryRankLeadsToTheStalledOne) {
  const char* transport = GetParam();
  setenv("MCL_ALGO", "allreduce:ring", 1);
  Baton baton;
  ASSERT_TRUE(runRanks(4, [&](RankContext& ctx) {
    mclComm_t comm = initWithTimeout(ctx, transport, ctx.rank() == 0 ? 1 : 60);
    if (comm == nullptr) return;
    std::vector<float> data(1 << 16, 1.0f);
    if (ctx.rank() == 2) {
      for (const char* other : {"rank 0 done", "rank 1 done", "rank 3 done"})
        if (!baton.await(other)) ctx.fail("%s: not within 60 s", other);
      mclCommAbort(comm);
      return;
    }
    const mclResult_t r = mclAllReduce(data.data(), data.data(), data.size(),
                                       mclFloat32, mclSum, comm, nullptr);
    const std::string message = mclGetLastError(comm);
    if (r != mclTimeout && r != mclRemoteError)
      ctx.fail("code %d: %s", static_cast<int>(r), message.c_str());
    else if (message.find("rank 2") == std::string::npos)
      ctx.fail("the error does not name rank 2: %s", message.c_str());
    baton.pass("rank " + std::to_string(ctx.rank()) + " done");
    mclCommAbort(comm);
  }));
  unsetenv("MCL_ALGO");
}

INSTANTIATE_TEST_SUITE_P(Transports, Farewell,
                         ::testing::Values("shm", "tcp", "rdma"));

}  // namespace
}  // namespace mcl::test
