// Bad arguments to operations and communicator calls: each returns its
// documented code at once with a message naming the argument, and after each
// mclInvalidArgument the communicator still computes an all-reduce.
#include <gtest/gtest.h>

#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "expect_error.h"
#include "multiprocess.h"

namespace mcl::test {
namespace {

constexpr auto kBound = std::chrono::seconds(30);
constexpr int kTimeout = 5;  // a rank that wrongly waits fails, not hangs

TEST(BadInput, NullCommPointerAtInit) {
  auto body = [](RankContext& ctx) {
    mclConfig_t config = MCL_CONFIG_INITIALIZER;
    expectError(ctx, mclCommInitRank(nullptr, 1, ctx.id(), 0),
                mclInvalidArgument, "mclCommInitRank(NULL)",
                {"mclCommInitRank", "comm is NULL"});
    expectError(ctx, mclCommInitRankConfig(nullptr, 1, ctx.id(), 0, &config),
                mclInvalidArgument, "mclCommInitRankConfig(NULL)",
                {"comm is NULL"});
    // The id was not consumed: a correct init still works.
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    expectAllReduceWorks(ctx, comm, "NULL comm pointers");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(1, body, kBound));
}

TEST(BadInput, NullCommHandle) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    const mclComm_t none = nullptr;
    const mclStream_t sync = nullptr;
    int32_t x = 1, y = 0;
    int n = 0;
    mclResult_t async = mclSuccess;
    const std::pair<const char*, std::function<mclResult_t()>> calls[] = {
        {"mclAllReduce",
         [&] { return mclAllReduce(&x, &y, 1, mclInt32, mclSum, none, sync); }},
        {"mclAllGather",
         [&] { return mclAllGather(&x, &y, 1, mclInt32, none, sync); }},
        {"mclBroadcast",
         [&] { return mclBroadcast(&x, &y, 1, mclInt32, 0, none, sync); }},
        {"mclReduce",
         [&] { return mclReduce(&x, &y, 1, mclInt32, mclSum, 0, none, sync); }},
        {"mclReduceScatter",
         [&] {
           return mclReduceScatter(&x, &y, 1, mclInt32, mclSum, none, sync);
         }},
        {"mclBarrier", [&] { return mclBarrier(none, sync); }},
        {"mclSend", [&] { return mclSend(&x, 1, mclInt32, 0, none, sync); }},
        {"mclRecv", [&] { return mclRecv(&y, 1, mclInt32, 0, none, sync); }},
        {"mclCommCount", [&] { return mclCommCount(nullptr, &n); }},
        {"mclCommUserRank", [&] { return mclCommUserRank(nullptr, &n); }},
        {"mclCommGetAsyncError",
         [&] { return mclCommGetAsyncError(nullptr, &async); }},
        {"mclCommFinalize", [&] { return mclCommFinalize(nullptr); }},
        {"mclCommDestroy", [&] { return mclCommDestroy(nullptr); }},
        {"mclCommAbort", [&] { return mclCommAbort(nullptr); }},
    };
    for (const auto& [name, call] : calls)
      expectRejected(ctx, comm, call(), name, {name, "comm is NULL"});
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(1, body, kBound));
}

TEST(BadInput, NullOutputPointers) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    expectRejected(ctx, comm, mclCommCount(comm, nullptr), "count=NULL",
                   {"count is NULL"});
    expectRejected(ctx, comm, mclCommUserRank(comm, nullptr), "rank=NULL",
                   {"rank is NULL"});
    expectRejected(ctx, comm, mclCommGetAsyncError(comm, nullptr),
                   "asyncError=NULL", {"asyncError is NULL"});
    expectRejected(ctx, comm, mclStreamCreate(nullptr), "stream=NULL",
                   {"stream is NULL"});
    expectRejected(ctx, comm, mclStreamDestroy(nullptr),
                   "mclStreamDestroy(NULL)", {"stream is NULL"});
    expectRejected(ctx, comm, mclGetUniqueId(nullptr), "mclGetUniqueId(NULL)",
                   {"uniqueId is NULL"});
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(1, body, kBound));
}

TEST(BadInput, NullBuffersWithNonZeroCount) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    std::vector<int32_t> b(8, 1);
    int32_t* p = b.data();
    int peer = 1 - ctx.rank();
    expectRejected(ctx, comm,
                   mclAllReduce(nullptr, p, 4, mclInt32, mclSum, comm, nullptr),
                   "all-reduce sendbuff=NULL", {"sendbuff is NULL"});
    expectRejected(ctx, comm,
                   mclAllReduce(p, nullptr, 4, mclInt32, mclSum, comm, nullptr),
                   "all-reduce recvbuff=NULL", {"recvbuff is NULL"});
    expectRejected(ctx, comm,
                   mclAllGather(nullptr, p, 4, mclInt32, comm, nullptr),
                   "all-gather sendbuff=NULL", {"sendbuff is NULL"});
    expectRejected(ctx, comm,
                   mclAllGather(p, nullptr, 4, mclInt32, comm, nullptr),
                   "all-gather recvbuff=NULL", {"recvbuff is NULL"});
    expectRejected(
        ctx, comm,
        mclReduceScatter(nullptr, p, 4, mclInt32, mclSum, comm, nullptr),
        "reduce-scatter sendbuff=NULL", {"sendbuff is NULL"});
    expectRejected(
        ctx, comm,
        mclReduceScatter(p, nullptr, 4, mclInt32, mclSum, comm, nullptr),
        "reduce-scatter recvbuff=NULL", {"recvbuff is NULL"});
    expectRejected(ctx, comm,
                   mclBroadcast(p, nullptr, 4, mclInt32, 0, comm, nullptr),
                   "broadcast recvbuff=NULL", {"recvbuff is NULL"});
    expectRejected(ctx, comm,
                   mclReduce(nullptr, p, 4, mclInt32, mclSum, 0, comm, nullptr),
                   "reduce sendbuff=NULL", {"sendbuff is NULL"});
    expectRejected(ctx, comm,
                   mclSend(nullptr, 4, mclInt32, peer, comm, nullptr),
                   "send sendbuff=NULL", {"sendbuff is NULL"});
    expectRejected(ctx, comm,
                   mclRecv(nullptr, 4, mclInt32, peer, comm, nullptr),
                   "recv recvbuff=NULL", {"recvbuff is NULL"});
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

TEST(BadInput, NullBuffersOnRootWithNonZeroCount) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    int32_t x[4] = {1, 2, 3, 4};
    expectRejected(ctx, comm,
                   mclBroadcast(nullptr, x, 4, mclInt32, 0, comm, nullptr),
                   "broadcast root sendbuff=NULL", {"sendbuff is NULL"});
    expectRejected(ctx, comm,
                   mclReduce(x, nullptr, 4, mclInt32, mclSum, 0, comm, nullptr),
                   "reduce root recvbuff=NULL", {"recvbuff is NULL"});
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(1, body, kBound));
}

// NULL with count 0 is valid everywhere, and so is NULL where the contract
// says the buffer is not used (broadcast's sendbuff and reduce's recvbuff off
// the root).
TEST(BadInput, NullBuffersAreFineWhereUnused) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    int peer = 1 - ctx.rank();
    ctx.ok(mclAllReduce(nullptr, nullptr, 0, mclFloat, mclSum, comm, nullptr),
           "all-reduce count 0");
    ctx.ok(mclAllGather(nullptr, nullptr, 0, mclFloat, comm, nullptr),
           "all-gather count 0");
    ctx.ok(
        mclReduceScatter(nullptr, nullptr, 0, mclFloat, mclMax, comm, nullptr),
        "reduce-scatter count 0");
    ctx.ok(mclBroadcast(nullptr, nullptr, 0, mclFloat, 1, comm, nullptr),
           "broadcast count 0");
    ctx.ok(mclReduce(nullptr, nullptr, 0, mclFloat, mclSum, 0, comm, nullptr),
           "reduce count 0");
    ctx.ok(mclGroupStart(), "mclGroupStart");
    ctx.ok(mclSend(nullptr, 0, mclFloat, peer, comm, nullptr), "send 0");
    ctx.ok(mclRecv(nullptr, 0, mclFloat, peer, comm, nullptr), "recv 0");
    ctx.ok(mclGroupEnd(), "mclGroupEnd (count 0)");

    int32_t v[3] = {7, 8, 9};
    int32_t got[3] = {0, 0, 0};
    bool root = ctx.rank() == 0;
    ctx.ok(mclBroadcast(root ? v : nullptr, got, 3, mclInt32, 0, comm, nullptr),
           "broadcast with NULL sendbuff off the root");
    if (got[0] != 7 || got[2] != 9)
      ctx.fail("broadcast gave %d,%d,%d", got[0], got[1], got[2]);
    int32_t sum[3] = {0, 0, 0};
    ctx.ok(mclReduce(v, root ? sum : nullptr, 3, mclInt32, mclSum, 0, comm,
                     nullptr),
           "reduce with NULL recvbuff off the root");
    if (root && (sum[0] != 14 || sum[2] != 18))
      ctx.fail("reduce gave %d,%d,%d", sum[0], sum[1], sum[2]);
    expectAllReduceWorks(ctx, comm, "count-0 operations");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

TEST(BadInput, CountOverflow) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    std::vector<int32_t> b(8, 1);
    int32_t* s = b.data();
    int32_t* r = b.data() + 4;
    int peer = 1 - ctx.rank();
    // Each count times 4 bytes overflows, or passes PTRDIFF_MAX.
    for (size_t count : {SIZE_MAX, SIZE_MAX / 4 + 1,
                         static_cast<size_t>(PTRDIFF_MAX) / 4 + 1}) {
      expectRejected(ctx, comm,
                     mclAllReduce(s, r, count, mclInt32, mclSum, comm, nullptr),
                     "all-reduce count overflow", {"count", "overflows"});
      expectRejected(ctx, comm,
                     mclBroadcast(s, r, count, mclInt32, 0, comm, nullptr),
                     "broadcast count overflow", {"count", "overflows"});
      expectRejected(ctx, comm,
                     mclSend(s, count, mclInt32, peer, comm, nullptr),
                     "send count overflow", {"count", "overflows"});
      expectRejected(ctx, comm,
                     mclRecv(r, count, mclInt32, peer, comm, nullptr),
                     "recv count overflow", {"count", "overflows"});
    }
    // Fits alone, overflows once multiplied by nranks = 2.
    size_t half = static_cast<size_t>(PTRDIFF_MAX) / 8 + 1;
    expectRejected(ctx, comm, mclAllGather(s, r, half, mclInt32, comm, nullptr),
                   "all-gather sendcount x nranks overflow",
                   {"sendcount", "nranks", "overflows"});
    expectRejected(
        ctx, comm,
        mclReduceScatter(s, r, half, mclInt32, mclSum, comm, nullptr),
        "reduce-scatter recvcount x nranks overflow",
        {"recvcount", "nranks", "overflows"});
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

TEST(BadInput, UnknownDatatypeAndOp) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    int64_t s[2] = {1, 2}, r[2] = {0, 0};
    for (int t : {42, -1, static_cast<int>(mclNumTypes)}) {
      auto type = static_cast<mclDataType_t>(t);
      std::string name = "datatype " + std::to_string(t);
      expectRejected(ctx, comm,
                     mclAllReduce(s, r, 2, type, mclSum, comm, nullptr),
                     name.c_str(), {name.c_str()});
      expectRejected(ctx, comm, mclAllGather(s, r, 2, type, comm, nullptr),
                     name.c_str(), {name.c_str()});
      expectRejected(ctx, comm, mclSend(s, 2, type, 0, comm, nullptr),
                     name.c_str(), {name.c_str()});
    }
    for (int o : {9, -1, static_cast<int>(mclNumOps)}) {
      auto op = static_cast<mclRedOp_t>(o);
      std::string name = "op " + std::to_string(o);
      expectRejected(ctx, comm,
                     mclAllReduce(s, r, 2, mclInt64, op, comm, nullptr),
                     name.c_str(), {name.c_str()});
      expectRejected(ctx, comm,
                     mclReduce(s, r, 2, mclInt64, op, 0, comm, nullptr),
                     name.c_str(), {name.c_str()});
      expectRejected(ctx, comm,
                     mclReduceScatter(s, r, 2, mclInt64, op, comm, nullptr),
                     name.c_str(), {name.c_str()});
    }
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(1, body, kBound));
}

TEST(BadInput, RootOrPeerOutOfRange) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    float s[4] = {1, 2, 3, 4}, r[4] = {};
    for (int bad : {-1, 2, INT_MIN}) {
      std::string root = "root " + std::to_string(bad);
      std::string peer = "peer " + std::to_string(bad);
      expectRejected(ctx, comm,
                     mclBroadcast(s, r, 4, mclFloat, bad, comm, nullptr),
                     root.c_str(), {root.c_str(), "out of range"});
      expectRejected(ctx, comm,
                     mclReduce(s, r, 4, mclFloat, mclSum, bad, comm, nullptr),
                     root.c_str(), {root.c_str(), "out of range"});
      expectRejected(ctx, comm, mclSend(s, 4, mclFloat, bad, comm, nullptr),
                     peer.c_str(), {peer.c_str(), "out of range"});
      expectRejected(ctx, comm, mclRecv(r, 4, mclFloat, bad, comm, nullptr),
                     peer.c_str(), {peer.c_str(), "out of range"});
    }
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

TEST(BadInput, PartiallyOverlappingBuffers) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    std::vector<int32_t> b(64, 1);
    int32_t* p = b.data();
    const char* overlap = "overlap";
    expectRejected(ctx, comm,
                   mclAllReduce(p, p + 1, 8, mclInt32, mclSum, comm, nullptr),
                   "all-reduce recvbuff = sendbuff + 1", {overlap});
    expectRejected(ctx, comm,
                   mclAllReduce(p + 3, p, 8, mclInt32, mclSum, comm, nullptr),
                   "all-reduce sendbuff = recvbuff + 3", {overlap});
    // All-gather in place is sendbuff == recvbuff + rank * count only.
    expectRejected(ctx, comm,
                   mclAllGather(p + 1, p, 8, mclInt32, comm, nullptr),
                   "all-gather sendbuff = recvbuff + 1", {overlap});
    int other = 1 - ctx.rank();
    expectRejected(ctx, comm,
                   mclAllGather(p + other * 8, p, 8, mclInt32, comm, nullptr),
                   "all-gather sendbuff at another rank's block", {overlap});
    expectRejected(
        ctx, comm,
        mclReduceScatter(p, p + 1, 8, mclInt32, mclSum, comm, nullptr),
        "reduce-scatter recvbuff = sendbuff + 1", {overlap});
    expectRejected(
        ctx, comm,
        mclReduceScatter(p, p + other * 8, 8, mclInt32, mclSum, comm, nullptr),
        "reduce-scatter recvbuff at another rank's block", {overlap});
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

TEST(BadInput, PartiallyOverlappingBuffersOnRoot) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    double b[16] = {};
    expectRejected(ctx, comm,
                   mclBroadcast(b, b + 2, 8, mclDouble, 0, comm, nullptr),
                   "broadcast overlap", {"overlap"});
    expectRejected(ctx, comm,
                   mclReduce(b + 7, b, 8, mclDouble, mclMax, 0, comm, nullptr),
                   "reduce overlap", {"overlap"});
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(1, body, kBound));
}

// A bad call inside a group fails the whole group at mclGroupEnd; nothing of
// the group runs, and the communicator still works.
TEST(BadInput, BadCallInsideGroupCancelsTheGroup) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    int32_t in = 5, out = -1;
    ctx.ok(mclGroupStart(), "mclGroupStart");
    ctx.ok(mclAllReduce(&in, &out, 1, mclInt32, mclSum, comm, nullptr),
           "valid all-reduce in the group");
    expectError(ctx,
                mclAllReduce(&in, nullptr, 1, mclInt32, mclSum, comm, nullptr),
                mclInvalidArgument, "bad all-reduce in the group",
                {"recvbuff is NULL"});
    expectError(ctx, mclGroupEnd(), mclInvalidArgument,
                "mclGroupEnd of a group with a bad call",
                {"group was not run", "recvbuff is NULL"});
    if (out != -1) ctx.fail("the cancelled group ran: out = %d", out);
    expectAllReduceWorks(ctx, comm, "a cancelled group");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

}  // namespace
}  // namespace mcl::test
