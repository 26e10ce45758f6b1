// The ways NCCL programs make communicators, on mcl: several ranks
// initialised from one thread inside a group, mclCommInitAll, non-blocking
// init, split and finalize polled with mclCommGetAsyncError, and destroying
// or aborting a communicator whose init is still under way.
#include <gtest/gtest.h>
#include <mcl/mcl.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "multiprocess.h"

namespace {

using Clock = std::chrono::steady_clock;
using mcl::test::RankContext;
using mcl::test::runRankThreads;

mclConfig_t configWith(int blocking, int timeoutSeconds = 60) {
  mclConfig_t config = MCL_CONFIG_INITIALIZER;
  config.blocking = blocking;
  config.timeoutSeconds = timeoutSeconds;
  return config;
}

// Polls until the communicator leaves mclInProgress (bounded).
mclResult_t pollUntilDone(mclComm_t comm, std::chrono::seconds bound) {
  const auto deadline = Clock::now() + bound;
  mclResult_t state = mclInProgress;
  while (Clock::now() < deadline) {
    mclResult_t r = mclCommGetAsyncError(comm, &state);
    if (r != mclSuccess) return r;
    if (state != mclInProgress) return state;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return mclInProgress;
}

// One thread drives every communicator: an all-reduce of rank+1 on each, in
// one group (they progress together), checked against n(n+1)/2.
void expectGroupAllReduce(const std::vector<mclComm_t>& comms) {
  const size_t n = comms.size();
  std::vector<std::vector<float>> data(n);
  ASSERT_EQ(mclGroupStart(), mclSuccess);
  for (size_t r = 0; r < n; ++r) {
    data[r].assign(1000, float(r + 1));
    ASSERT_EQ(mclAllReduce(data[r].data(), data[r].data(), data[r].size(),
                           mclFloat, mclSum, comms[r], nullptr),
              mclSuccess)
        << mclGetLastError(nullptr);
  }
  ASSERT_EQ(mclGroupEnd(), mclSuccess) << mclGetLastError(nullptr);
  const float want = float(n * (n + 1) / 2);
  for (size_t r = 0; r < n; ++r)
    for (float x : data[r]) ASSERT_EQ(x, want) << "rank " << r;
}

void destroyAll(const std::vector<mclComm_t>& comms) {
  for (mclComm_t c : comms) {
    if (c != nullptr) {
      EXPECT_EQ(mclCommDestroy(c), mclSuccess);
    }
  }
}

TEST(InitModes, OneThreadInitialisesEveryRankInAGroup) {
  for (int n : {2, 3}) {
    mclUniqueId id;
    ASSERT_EQ(mclGetUniqueId(&id), mclSuccess);
    std::vector<mclComm_t> comms(size_t(n), nullptr);
    ASSERT_EQ(mclGroupStart(), mclSuccess);
    for (int r = 0; r < n; ++r)
      ASSERT_EQ(mclCommInitRank(&comms[size_t(r)], n, id, r), mclSuccess)
          << mclGetLastError(nullptr);
    // Not built yet: the init waits for the group's end.
    int count = 0;
    EXPECT_EQ(mclCommCount(comms[0], &count), mclInvalidUsage);
    EXPECT_NE(std::string(mclGetLastError(nullptr)).find("still being"),
              std::string::npos)
        << mclGetLastError(nullptr);
    ASSERT_EQ(mclGroupEnd(), mclSuccess) << mclGetLastError(nullptr);
    for (int r = 0; r < n; ++r) {
      int rank = -1;
      ASSERT_EQ(mclCommUserRank(comms[size_t(r)], &rank), mclSuccess);
      EXPECT_EQ(rank, r);
    }
    expectGroupAllReduce(comms);
    destroyAll(comms);
  }
}

TEST(InitModes, InitAllBuildsRanksAsThreads) {
  std::vector<mclComm_t> comms(3, nullptr);
  const int devices[] = {4, 0, 7};
  ASSERT_EQ(mclCommInitAll(comms.data(), 3, devices), mclSuccess)
      << mclGetLastError(nullptr);
  for (int r = 0; r < 3; ++r) {
    int rank = -1, count = 0;
    ASSERT_EQ(mclCommUserRank(comms[size_t(r)], &rank), mclSuccess);
    ASSERT_EQ(mclCommCount(comms[size_t(r)], &count), mclSuccess);
    EXPECT_EQ(rank, r);
    EXPECT_EQ(count, 3);
  }
  expectGroupAllReduce(comms);
  destroyAll(comms);

  std::vector<mclComm_t> two(2, nullptr);
  ASSERT_EQ(mclCommInitAll(two.data(), 2, nullptr), mclSuccess);
  // In-place broadcast, NCCL's legacy form, from rank 1.
  std::vector<int> a(64, 0), b(64, 0);
  for (size_t i = 0; i < b.size(); ++i) b[i] = int(i) * 3;
  ASSERT_EQ(mclGroupStart(), mclSuccess);
  ASSERT_EQ(mclBcast(a.data(), a.size(), mclInt32, 1, two[0], nullptr),
            mclSuccess);
  ASSERT_EQ(mclBcast(b.data(), b.size(), mclInt32, 1, two[1], nullptr),
            mclSuccess);
  ASSERT_EQ(mclGroupEnd(), mclSuccess) << mclGetLastError(nullptr);
  EXPECT_EQ(a, b);
  destroyAll(two);
}

TEST(InitModes, InitAllRefusesBadArguments) {
  mclComm_t comms[3] = {nullptr, nullptr, nullptr};
  EXPECT_EQ(mclCommInitAll(nullptr, 2, nullptr), mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("comms"),
            std::string::npos);
  EXPECT_EQ(mclCommInitAll(comms, 0, nullptr), mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("ndev 0"),
            std::string::npos);
  const int negative[] = {0, -1};
  EXPECT_EQ(mclCommInitAll(comms, 2, negative), mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("devlist[1] = -1"),
            std::string::npos)
      << mclGetLastError(nullptr);
  const int twice[] = {2, 5, 2};
  EXPECT_EQ(mclCommInitAll(comms, 3, twice), mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr))
                .find("devlist[0] and devlist[2] are both 2"),
            std::string::npos)
      << mclGetLastError(nullptr);
  for (mclComm_t c : comms) EXPECT_EQ(c, nullptr);
}

TEST(InitModes, NonBlockingInitReturnsAtOnceAndIsPolled) {
  EXPECT_TRUE(runRankThreads(3, [](RankContext& ctx) {
    mclConfig_t config = configWith(0);
    mclComm_t comm = nullptr;
    mclResult_t r = mclCommInitRankConfig(&comm, ctx.nranks(), ctx.id(),
                                          ctx.rank(), &config);
    if (r != mclInProgress) {
      ctx.fail("non-blocking init returned %s, not mclInProgress",
               mclGetErrorString(r));
      return;
    }
    if (comm == nullptr) return ctx.fail("no handle from a non-blocking init");
    // The last rank is late on purpose: the others are still in progress.
    if (ctx.rank() != ctx.nranks() - 1) {
      float x = 1;
      mclResult_t early =
          mclAllReduce(&x, &x, 1, mclFloat, mclSum, comm, nullptr);
      if (early != mclInvalidUsage)
        ctx.fail("a collective during init gave %s", mclGetErrorString(early));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    mclResult_t state = pollUntilDone(comm, std::chrono::seconds(60));
    if (!ctx.ok(state, "init state")) return;
    float x = float(ctx.rank() + 1);
    if (!ctx.ok(mclAllReduce(&x, &x, 1, mclFloat, mclSum, comm, nullptr),
                "mclAllReduce"))
      return;
    if (x != 6.0f) ctx.fail("all-reduce gave %g, not 6", double(x));
    // Finalize with nothing queued ends at once.
    mclResult_t f = mclCommFinalize(comm);
    if (f != mclSuccess && f != mclInProgress)
      ctx.fail("mclCommFinalize: %s", mclGetErrorString(f));
    if (!ctx.ok(pollUntilDone(comm, std::chrono::seconds(30)), "finalize"))
      return;
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  }));
}

TEST(InitModes, NonBlockingInitFailureIsReportedByPolling) {
  // Two ranks are expected; one comes. The init fails at its timeout.
  mclUniqueId id;
  ASSERT_EQ(mclGetUniqueId(&id), mclSuccess);
  mclConfig_t config = configWith(0, 1);
  mclComm_t comm = nullptr;
  ASSERT_EQ(mclCommInitRankConfig(&comm, 2, id, 0, &config), mclInProgress);
  mclResult_t state = pollUntilDone(comm, std::chrono::seconds(30));
  EXPECT_EQ(state, mclTimeout);
  std::string why = mclGetLastError(comm);
  EXPECT_NE(why.find("mclCommInitRank, rank 0 of 2"), std::string::npos) << why;
  // Calls on it give the init's error; destroy frees it.
  int count = 0;
  EXPECT_EQ(mclCommCount(comm, &count), mclTimeout);
  EXPECT_EQ(mclCommDestroy(comm), mclSuccess);
  EXPECT_EQ(mclCommCount(comm, &count), mclInvalidArgument);
}

TEST(InitModes, DestroyOrAbortDuringInitEndsItAtOnce) {
  for (bool abort : {false, true}) {
    mclUniqueId id;
    ASSERT_EQ(mclGetUniqueId(&id), mclSuccess);
    mclConfig_t config = configWith(0, 60);
    mclComm_t comm = nullptr;
    // Rank 1 never comes: without the cancel, this init waits 60 s.
    ASSERT_EQ(mclCommInitRankConfig(&comm, 2, id, 0, &config), mclInProgress);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto start = Clock::now();
    EXPECT_EQ(abort ? mclCommAbort(comm) : mclCommDestroy(comm), mclSuccess)
        << mclGetLastError(nullptr);
    const double took =
        std::chrono::duration<double>(Clock::now() - start).count();
    EXPECT_LT(took, 15.0) << (abort ? "abort" : "destroy");
    mclResult_t state;
    EXPECT_EQ(mclCommGetAsyncError(comm, &state), mclInvalidArgument);
  }
}

TEST(InitModes, GroupInitThenCollectiveInTheSameGroupIsRefused) {
  mclUniqueId id;
  ASSERT_EQ(mclGetUniqueId(&id), mclSuccess);
  mclComm_t comms[2] = {nullptr, nullptr};
  float x = 1;
  ASSERT_EQ(mclGroupStart(), mclSuccess);
  ASSERT_EQ(mclCommInitRank(&comms[0], 2, id, 0), mclSuccess);
  ASSERT_EQ(mclCommInitRank(&comms[1], 2, id, 1), mclSuccess);
  EXPECT_EQ(mclAllReduce(&x, &x, 1, mclFloat, mclSum, comms[0], nullptr),
            mclInvalidUsage);
  // The group fails; its inits never start, and their handles say why.
  EXPECT_EQ(mclGroupEnd(), mclInvalidUsage);
  for (mclComm_t c : comms) {
    mclResult_t state = mclSuccess;
    EXPECT_EQ(mclCommGetAsyncError(c, &state), mclSuccess);
    EXPECT_EQ(state, mclInvalidUsage);
    EXPECT_NE(std::string(mclGetLastError(nullptr)).find("group was not run"),
              std::string::npos)
        << mclGetLastError(nullptr);
    EXPECT_EQ(mclCommDestroy(c), mclSuccess);
  }
}

TEST(InitModes, NonBlockingSplitIsPolledOnTheParent) {
  EXPECT_TRUE(runRankThreads(4, [](RankContext& ctx) {
    mclComm_t parent = mcl::test::initComm(ctx);
    if (parent == nullptr) return;
    mclConfig_t config = configWith(0);
    const int color = ctx.rank() == 3 ? MCL_SPLIT_NOCOLOR : ctx.rank() % 2;
    mclComm_t child = nullptr;
    if (!ctx.ok(mclCommSplit(parent, color, -ctx.rank(), &child, &config),
                "mclCommSplit"))
      return;
    if ((child == nullptr) != (color == MCL_SPLIT_NOCOLOR))
      ctx.fail("color %d got %s handle", color, child ? "a" : "no");
    if (!ctx.ok(pollUntilDone(parent, std::chrono::seconds(60)),
                "the parent's state"))
      return;
    // The parent is free again.
    float x = 1;
    ctx.ok(mclAllReduce(&x, &x, 1, mclFloat, mclSum, parent, nullptr),
           "mclAllReduce on the parent");
    if (x != 4.0f) ctx.fail("parent all-reduce gave %g", double(x));
    if (child != nullptr) {
      if (!ctx.ok(pollUntilDone(child, std::chrono::seconds(5)),
                  "the child's state"))
        return;
      int rank = -1, count = 0;
      ctx.ok(mclCommUserRank(child, &rank), "mclCommUserRank");
      ctx.ok(mclCommCount(child, &count), "mclCommCount");
      // Color 0: ranks 0 and 2, keyed -rank: rank 2 first.
      const int want = color == 0 ? (ctx.rank() == 2 ? 0 : 1) : 0;
      if (rank != want || count != (color == 0 ? 2 : 1))
        ctx.fail("child rank %d of %d, expected %d of %d", rank, count, want,
                 color == 0 ? 2 : 1);
      ctx.ok(mclCommDestroy(child), "destroy child");
    }
    ctx.ok(mclCommDestroy(parent), "destroy parent");
  }));
}

TEST(InitModes, OneThreadSplitsEveryRankInAGroup) {
  std::vector<mclComm_t> parents(3, nullptr);
  ASSERT_EQ(mclCommInitAll(parents.data(), 3, nullptr), mclSuccess);
  std::vector<mclComm_t> children(3, nullptr);
  ASSERT_EQ(mclGroupStart(), mclSuccess);
  for (size_t r = 0; r < 3; ++r)
    ASSERT_EQ(mclCommSplit(parents[r], 0, int(r), &children[r], nullptr),
              mclSuccess)
        << mclGetLastError(nullptr);
  ASSERT_EQ(mclGroupEnd(), mclSuccess) << mclGetLastError(nullptr);
  expectGroupAllReduce(children);
  expectGroupAllReduce(parents);
  destroyAll(children);
  destroyAll(parents);
}

TEST(InitModes, NcclShapedConstantsAndRefusals) {
  EXPECT_STRNE(mclGetErrorString(mclUnhandledDeviceError),
               "unknown result code");
  EXPECT_EQ(int(mclUnhandledDeviceError), 1);
  EXPECT_EQ(int(mclMaxRedOp), 0x7fffffff);
  mclComm_t none = MCL_COMM_NULL;
  EXPECT_EQ(none, nullptr);
  EXPECT_GE(MCL_VERSION_CODE, MCL_VERSION(0, 2, 0));
  EXPECT_STREQ(MCL_SUFFIX, "");

  mclUniqueId id;
  ASSERT_EQ(mclGetUniqueId(&id), mclSuccess);
  mclConfig_t config = configWith(2);
  mclComm_t comm = nullptr;
  EXPECT_EQ(mclCommInitRankConfig(&comm, 1, id, 0, &config),
            mclInvalidArgument);
  EXPECT_NE(std::string(mclGetLastError(nullptr)).find("config->blocking 2"),
            std::string::npos)
      << mclGetLastError(nullptr);
  // A bad rank is refused at the call, also when the init would run later.
  config = configWith(0);
  EXPECT_EQ(mclCommInitRankConfig(&comm, 2, id, 5, &config),
            mclInvalidArgument);
  EXPECT_EQ(comm, nullptr);
  ASSERT_EQ(mclGroupStart(), mclSuccess);
  EXPECT_EQ(mclCommInitRank(&comm, 2, id, -1), mclInvalidArgument);
  EXPECT_EQ(mclGroupEnd(), mclInvalidArgument);
}

}  // namespace
