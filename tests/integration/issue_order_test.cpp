// Operations run in the order they were issued on each communicator,
// whichever thread or stream runs them, and point-to-point never mixes with
// collectives: the cases that once exchanged the wrong bytes silently.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "expect_error.h"
#include "multiprocess.h"

namespace mcl::test {
namespace {

// Every rank: all-reduce a on a stream, then b on the NULL stream, many
// times. Run out of issue order, ranks would pair a with b.
TEST(IssueOrder, StreamThenNullStreamKeepIssueOrder) {
  EXPECT_TRUE(runRanks(2, [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, 20);
    if (comm == nullptr) return;
    mclStream_t stream = nullptr;
    if (!ctx.ok(mclStreamCreate(&stream), "mclStreamCreate")) return;
    for (int i = 0; i < 200 && !ctx.failed(); ++i) {
      int32_t a = 1, b = 100, ra = 0, rb = 0;
      ctx.ok(mclAllReduce(&a, &ra, 1, mclInt32, mclSum, comm, stream), "a");
      ctx.ok(mclAllReduce(&b, &rb, 1, mclInt32, mclSum, comm, nullptr), "b");
      ctx.ok(mclStreamSynchronize(stream), "sync");
      if (ra != 2 || rb != 200)
        ctx.fail("iteration %d: a=%d b=%d, expected 2 and 200", i, ra, rb);
    }
    ctx.ok(mclStreamDestroy(stream), "mclStreamDestroy");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  }));
}

TEST(IssueOrder, TwoStreamsKeepIssueOrder) {
  EXPECT_TRUE(runRanks(3, [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, 20);
    if (comm == nullptr) return;
    mclStream_t s1 = nullptr, s2 = nullptr;
    ctx.ok(mclStreamCreate(&s1), "create");
    ctx.ok(mclStreamCreate(&s2), "create");
    std::vector<int32_t> in(64), out(64);
    for (int i = 0; i < 64; ++i) in[static_cast<size_t>(i)] = i;
    for (int i = 0; i < 64; ++i) {
      auto k = static_cast<size_t>(i);
      ctx.ok(mclAllReduce(&in[k], &out[k], 1, mclInt32, mclSum, comm,
                          i % 2 ? s1 : s2),
             "all-reduce");
    }
    ctx.ok(mclStreamSynchronize(s1), "sync");
    ctx.ok(mclStreamSynchronize(s2), "sync");
    for (int i = 0; i < 64; ++i)
      if (out[static_cast<size_t>(i)] != 3 * i) {
        ctx.fail("element %d: %d, expected %d", i, out[static_cast<size_t>(i)],
                 3 * i);
        break;
      }
    ctx.ok(mclStreamDestroy(s1), "destroy");
    ctx.ok(mclStreamDestroy(s2), "destroy");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  }));
}

// NCCL-valid: rank 0 groups a receive with an all-reduce; rank 1 runs the
// all-reduce first and sends afterwards.
TEST(IssueOrder, GroupedReceiveDoesNotTakeCollectiveBytes) {
  EXPECT_TRUE(runRanks(2, [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, 20);
    if (comm == nullptr) return;
    int32_t x = ctx.rank() + 1, sum = 0, message = 0;
    if (ctx.rank() == 0) {
      ctx.ok(mclGroupStart(), "start");
      ctx.ok(mclRecv(&message, 1, mclInt32, 1, comm, nullptr), "recv");
      ctx.ok(mclAllReduce(&x, &sum, 1, mclInt32, mclSum, comm, nullptr),
             "all-reduce");
      ctx.ok(mclGroupEnd(), "end");
      if (message != 42) ctx.fail("received %d, expected 42", message);
    } else {
      ctx.ok(mclAllReduce(&x, &sum, 1, mclInt32, mclSum, comm, nullptr),
             "all-reduce");
      int32_t answer = 42;
      ctx.ok(mclSend(&answer, 1, mclInt32, 0, comm, nullptr), "send");
    }
    if (sum != 3) ctx.fail("sum %d, expected 3", sum);
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  }));
}

// Two small in-place all-reduces in one group: each keeps its own copy of
// its input while the group's steps are built.
TEST(IssueOrder, GroupOfInPlaceSmallAllReduces) {
  EXPECT_TRUE(runRanks(2, [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, 20);
    if (comm == nullptr) return;
    std::vector<int32_t> a(16, 1 + ctx.rank()), b(512, 100 * (1 + ctx.rank()));
    ctx.ok(mclGroupStart(), "start");
    ctx.ok(mclAllReduce(a.data(), a.data(), a.size(), mclInt32, mclSum, comm,
                        nullptr),
           "a");
    ctx.ok(mclAllReduce(b.data(), b.data(), b.size(), mclInt32, mclSum, comm,
                        nullptr),
           "b");
    ctx.ok(mclGroupEnd(), "end");
    if (a[0] != 3 || a[15] != 3 || b[0] != 300 || b[511] != 300)
      ctx.fail("a=%d,%d b=%d,%d; expected 3 and 300", a[0], a[15], b[0],
               b[511]);
    ctx.ok(mclCommDestroy(comm), "destroy");
  }));
}

// A destroyed handle stays dead even when a new communicator takes its
// memory.
TEST(IssueOrder, DestroyedHandleStaysInvalidAfterReuse) {
  EXPECT_TRUE(runRanks(1, [](RankContext& ctx) {
    mclComm_t first = initComm(ctx, 20);
    if (first == nullptr) return;
    ctx.ok(mclCommDestroy(first), "destroy");
    mclUniqueId id;
    ctx.ok(mclGetUniqueId(&id), "mclGetUniqueId");
    mclComm_t second = nullptr;
    ctx.ok(mclCommInitRank(&second, 1, id, 0), "init");
    int count = 0;
    expectError(ctx, mclCommCount(first, &count), mclInvalidArgument,
                "stale handle", {"not a live communicator"});
    ctx.ok(mclCommCount(second, &count), "live handle");
    ctx.ok(mclCommDestroy(second), "destroy");
  }));
}

}  // namespace
}  // namespace mcl::test
