// mclCommSplit: groups by color ranked by key, MCL_SPLIT_NOCOLOR, what the
// new communicator inherits or takes from a config, and bad input failing
// every rank alike.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "multiprocess.h"

namespace mcl::test {
namespace {

// Sums each rank's parent rank over `comm`.
int sumOfParentRanks(RankContext& ctx, mclComm_t comm) {
  int v = ctx.rank();
  if (!ctx.ok(mclAllReduce(&v, &v, 1, mclInt32, mclSum, comm, nullptr),
              "allreduce on the new communicator"))
    return -1;
  return v;
}

TEST(CommSplit, ColorsFormGroupsRankedByKey) {
  EXPECT_TRUE(runRanks(4, [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx);
    if (comm == nullptr) return;
    mclComm_t half = nullptr;
    // Even and odd ranks; keys reverse the order.
    if (!ctx.ok(mclCommSplit(comm, ctx.rank() % 2, -ctx.rank(), &half, nullptr),
                "mclCommSplit"))
      return;
    int size = 0, rank = -1;
    ctx.ok(mclCommCount(half, &size), "count");
    ctx.ok(mclCommUserRank(half, &rank), "rank");
    if (size != 2) ctx.fail("new size %d, want 2", size);
    const int want = ctx.rank() >= 2 ? 0 : 1;  // higher parent rank first
    if (rank != want) ctx.fail("new rank %d, want %d", rank, want);
    const int sum = sumOfParentRanks(ctx, half);
    const int wantSum = ctx.rank() % 2 == 0 ? 0 + 2 : 1 + 3;
    if (sum != wantSum)
      ctx.fail("sum %d over the group, want %d", sum, wantSum);
    // The parent still works, and so does a split of the split.
    if (sumOfParentRanks(ctx, comm) != 6) ctx.fail("parent all-reduce wrong");
    mclComm_t alone = nullptr;
    if (ctx.ok(mclCommSplit(half, rank, 0, &alone, nullptr), "second split")) {
      ctx.ok(mclCommCount(alone, &size), "count");
      if (size != 1) ctx.fail("singleton size %d", size);
      ctx.ok(mclCommDestroy(alone), "destroy singleton");
    }
    ctx.ok(mclCommDestroy(half), "destroy half");
    ctx.ok(mclCommDestroy(comm), "destroy parent");
  }));
}

TEST(CommSplit, NoColorJoinsNothing) {
  EXPECT_TRUE(runRanks(3, [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx);
    if (comm == nullptr) return;
    mclComm_t sub = reinterpret_cast<mclComm_t>(&ctx);  // must be overwritten
    const int color = ctx.rank() == 1 ? MCL_SPLIT_NOCOLOR : 7;
    if (!ctx.ok(mclCommSplit(comm, color, 0, &sub, nullptr), "mclCommSplit"))
      return;
    if (ctx.rank() == 1) {
      if (sub != nullptr) ctx.fail("NOCOLOR gave a communicator");
    } else {
      int size = 0;
      ctx.ok(mclCommCount(sub, &size), "count");
      if (size != 2) ctx.fail("size %d, want 2", size);
      if (sumOfParentRanks(ctx, sub) != 2) ctx.fail("sum over {0,2} wrong");
      ctx.ok(mclCommDestroy(sub), "destroy");
    }
    ctx.ok(mclCommDestroy(comm), "destroy parent");
  }));
}

TEST(CommSplit, InheritsTheParentsAlgorithmsOrTakesTheConfigs) {
  EXPECT_TRUE(runRanks(2, [](RankContext& ctx) {
    mclConfig_t config = MCL_CONFIG_INITIALIZER;
    config.algorithms = "allreduce:tree";
    mclComm_t comm = nullptr;
    if (!ctx.ok(mclCommInitRankConfig(&comm, 2, ctx.id(), ctx.rank(), &config),
                "init"))
      return;
    const char* name = nullptr;
    mclComm_t same = nullptr, other = nullptr;
    if (!ctx.ok(mclCommSplit(comm, 0, ctx.rank(), &same, nullptr), "split"))
      return;
    ctx.ok(
        mclCommGetAlgorithm(same, mclFuncAllReduce, 1 << 20, mclFloat32, &name),
        "get algorithm");
    if (name == nullptr || std::strcmp(name, "tree") != 0)
      ctx.fail("inherited algorithm %s, want tree", name ? name : "NULL");
    mclConfig_t ring = MCL_CONFIG_INITIALIZER;
    ring.algorithms = "allreduce:halving_doubling";
    if (!ctx.ok(mclCommSplit(comm, 0, ctx.rank(), &other, &ring), "split"))
      return;
    ctx.ok(mclCommGetAlgorithm(other, mclFuncAllReduce, 8, mclFloat32, &name),
           "get algorithm");
    if (name == nullptr || std::strcmp(name, "halving_doubling") != 0)
      ctx.fail("configured algorithm %s, want halving_doubling",
               name ? name : "NULL");
    if (sumOfParentRanks(ctx, other) != 1) ctx.fail("sum wrong");
    ctx.ok(mclCommDestroy(other), "destroy");
    ctx.ok(mclCommDestroy(same), "destroy");
    ctx.ok(mclCommDestroy(comm), "destroy parent");
  }));
}

TEST(CommSplit, BadColorOnOneRankFailsEveryRankNamingIt) {
  EXPECT_TRUE(runRanks(3, [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx);
    if (comm == nullptr) return;
    mclComm_t sub = nullptr;
    mclResult_t r =
        mclCommSplit(comm, ctx.rank() == 2 ? -5 : 0, 0, &sub, nullptr);
    if (r != mclInvalidArgument)
      ctx.fail("result %d, want invalid argument", r);
    std::string msg = mclGetLastError(comm);
    if (msg.find("rank 2 passed color -5") == std::string::npos)
      ctx.fail("message: %s", msg.c_str());
    if (sub != nullptr) ctx.fail("a communicator despite the error");
    // Invalid arguments leave the parent usable.
    if (sumOfParentRanks(ctx, comm) != 3) ctx.fail("parent unusable after");
    // Inside a group the split runs at mclGroupEnd, as NCCL's does.
    mclGroupStart();
    ctx.ok(mclCommSplit(comm, 0, 0, &sub, nullptr), "split in a group");
    if (sub == nullptr) ctx.fail("no handle from a split in a group");
    if (!ctx.ok(mclGroupEnd(), "mclGroupEnd")) return;
    if (sumOfParentRanks(ctx, sub) != 3) ctx.fail("grouped split wrong");
    ctx.ok(mclCommDestroy(sub), "destroy the grouped split's");
    ctx.ok(mclCommDestroy(comm), "destroy");
  }));
}

}  // namespace
}  // namespace mcl::test
