// Streams and groups: operations queued on a stream return at once and run
// in order in the background; grouped operations run together at the
// outermost mclGroupEnd, so a two-way exchange of large messages does not
// deadlock; a group may mix collectives and point-to-point, and run on a
// stream.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "baton.h"
#include "expect_error.h"
#include "multiprocess.h"

namespace mcl::test {
namespace {

constexpr auto kBound = std::chrono::seconds(30);
constexpr int kTimeout = 10;
// 8 MiB of int32: many times a shared-memory ring, so a send waits for its
// receiver to drain it.
constexpr size_t kLarge = size_t{2} << 20;

int32_t pattern(int rank, size_t i) {
  return static_cast<int32_t>(rank * 10'000'000 +
                              static_cast<int>(i % 9'999'991));
}

bool checkPattern(RankContext& ctx, const std::vector<int32_t>& got, int from,
                  const char* what) {
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != pattern(from, i)) {
      ctx.fail("%s: element %zu is %d, expected %d (from rank %d)", what, i,
               got[i], pattern(from, i), from);
      return false;
    }
  return true;
}

std::vector<int32_t> patternBuffer(int rank, size_t count) {
  std::vector<int32_t> b(count);
  for (size_t i = 0; i < count; ++i) b[i] = pattern(rank, i);
  return b;
}

// Rank 1 joins only once rank 0 has queued its all-reduce and asked, so
// that all-reduce cannot have finished: the stream must say mclInProgress.
TEST(StreamsGroups, StreamOperationReturnsBeforeItCompletes) {
  Baton baton;
  auto body = [&](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    mclStream_t stream = nullptr;
    if (!ctx.ok(mclStreamCreate(&stream), "mclStreamCreate")) return;
    ctx.ok(mclBarrier(comm, nullptr), "aligning barrier");
    if (ctx.rank() == 1 && !baton.await("rank 0 asked"))
      ctx.fail("rank 0 did not queue its all-reduce within 60 s");
    std::vector<int32_t> in(1000, ctx.rank() + 1), out(1000, 0);
    ctx.ok(mclAllReduce(in.data(), out.data(), in.size(), mclInt32, mclSum,
                        comm, stream),
           "all-reduce on a stream");
    mclResult_t state = mclStreamQuery(stream);
    if (ctx.rank() == 0) baton.pass("rank 0 asked");
    if (ctx.rank() == 0 && state != mclInProgress)
      ctx.fail(
          "mclStreamQuery right after queueing said %s, expected "
          "mclInProgress (the peer has not joined yet)",
          mclGetErrorString(state));
    if (state != mclInProgress && state != mclSuccess)
      ctx.fail("mclStreamQuery: %s: %s", mclGetErrorString(state),
               mclGetLastError(nullptr));
    ctx.ok(mclStreamSynchronize(stream), "mclStreamSynchronize");
    if (mclStreamQuery(stream) != mclSuccess)
      ctx.fail("mclStreamQuery after synchronize is not mclSuccess");
    for (int32_t v : out)
      if (v != 3) {
        ctx.fail("stream all-reduce gave %d, expected 3", v);
        break;
      }
    ctx.ok(mclStreamDestroy(stream), "mclStreamDestroy");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

// Each step reads the previous one's result: only in-order execution gives
// these values.
TEST(StreamsGroups, StreamRunsOperationsInOrder) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    mclStream_t stream = nullptr;
    if (!ctx.ok(mclStreamCreate(&stream), "mclStreamCreate")) return;
    const int n = ctx.nranks(), r = ctx.rank();
    int64_t x = r + 1;  // sum: 6; then prod: 216; then broadcast, + rank
    int64_t gathered[3] = {0, 0, 0};
    ctx.ok(mclAllReduce(&x, &x, 1, mclInt64, mclSum, comm, stream), "sum");
    ctx.ok(mclAllReduce(&x, &x, 1, mclInt64, mclProd, comm, stream), "prod");
    int64_t fromRoot = r == 2 ? -1 : 0;
    ctx.ok(mclBroadcast(&x, &fromRoot, 1, mclInt64, 2, comm, stream),
           "broadcast");
    ctx.ok(mclAllGather(&x, gathered, 1, mclInt64, comm, stream), "gather");
    ctx.ok(mclGroupStart(), "mclGroupStart");
    int64_t fromPrev = 0;
    ctx.ok(mclSend(&fromRoot, 1, mclInt64, (r + 1) % n, comm, stream), "send");
    ctx.ok(mclRecv(&fromPrev, 1, mclInt64, (r + n - 1) % n, comm, stream),
           "recv");
    ctx.ok(mclGroupEnd(), "mclGroupEnd");
    if (!ctx.ok(mclStreamSynchronize(stream), "mclStreamSynchronize")) return;
    if (x != 216)
      ctx.fail("sum then prod gave %lld, expected 216",
               static_cast<long long>(x));
    if (fromRoot != 216 || fromPrev != 216)
      ctx.fail("broadcast then send gave %lld and %lld, expected 216",
               static_cast<long long>(fromRoot),
               static_cast<long long>(fromPrev));
    for (int64_t g : gathered)
      if (g != 216) ctx.fail("gather gave %lld", static_cast<long long>(g));
    ctx.ok(mclStreamDestroy(stream), "mclStreamDestroy");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(3, body, kBound));
}

// The inner mclGroupEnd runs nothing; the outer one runs everything.
TEST(StreamsGroups, NestedGroupsRunAtTheOutermostEnd) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    int peer = 1 - ctx.rank();
    std::vector<int32_t> out = patternBuffer(ctx.rank(), 5000);
    std::vector<int32_t> in(5000, -7);
    int32_t one = 1, sum = 0;
    ctx.ok(mclGroupStart(), "outer mclGroupStart");
    ctx.ok(mclGroupStart(), "inner mclGroupStart");
    ctx.ok(mclSend(out.data(), out.size(), mclInt32, peer, comm, nullptr),
           "send");
    ctx.ok(mclRecv(in.data(), in.size(), mclInt32, peer, comm, nullptr),
           "recv");
    ctx.ok(mclGroupEnd(), "inner mclGroupEnd");
    if (in[0] != -7 || in.back() != -7)
      ctx.fail("the inner mclGroupEnd already ran the receive");
    ctx.ok(mclAllReduce(&one, &sum, 1, mclInt32, mclSum, comm, nullptr),
           "all-reduce");
    if (!ctx.ok(mclGroupEnd(), "outer mclGroupEnd")) return;
    checkPattern(ctx, in, peer, "nested group receive");
    if (sum != 2) ctx.fail("nested group all-reduce gave %d", sum);
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

// Both ranks send 8 MiB to each other: without the group each send would
// wait for a receive that is never posted.
TEST(StreamsGroups, GroupedTwoWayLargeExchange) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    int peer = 1 - ctx.rank();
    std::vector<int32_t> out = patternBuffer(ctx.rank(), kLarge);
    std::vector<int32_t> in(kLarge, -1);
    ctx.ok(mclGroupStart(), "mclGroupStart");
    ctx.ok(mclSend(out.data(), kLarge, mclInt32, peer, comm, nullptr), "send");
    ctx.ok(mclRecv(in.data(), kLarge, mclInt32, peer, comm, nullptr), "recv");
    if (!ctx.ok(mclGroupEnd(), "mclGroupEnd")) return;
    checkPattern(ctx, in, peer, "8 MiB exchange");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

TEST(StreamsGroups, GroupMixesCollectivesAndPointToPoint) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    int peer = 1 - ctx.rank();
    std::vector<int32_t> out = patternBuffer(ctx.rank(), kLarge / 4);
    std::vector<int32_t> in(out.size(), -1);
    std::vector<float> vals(3000, static_cast<float>(ctx.rank() + 1));
    std::vector<float> sums(vals.size(), 0);
    double root = ctx.rank() == 1 ? 2.5 : 0;
    ctx.ok(mclGroupStart(), "mclGroupStart");
    ctx.ok(mclAllReduce(vals.data(), sums.data(), vals.size(), mclFloat, mclSum,
                        comm, nullptr),
           "all-reduce");
    ctx.ok(mclSend(out.data(), out.size(), mclInt32, peer, comm, nullptr),
           "send");
    ctx.ok(mclRecv(in.data(), in.size(), mclInt32, peer, comm, nullptr),
           "recv");
    ctx.ok(mclBroadcast(&root, &root, 1, mclDouble, 1, comm, nullptr),
           "broadcast");
    if (!ctx.ok(mclGroupEnd(), "mclGroupEnd")) return;
    checkPattern(ctx, in, peer, "grouped send/recv");
    for (float s : sums)
      if (s != 3.0f) {
        ctx.fail("grouped all-reduce gave %g, expected 3", s);
        break;
      }
    if (root != 2.5) ctx.fail("grouped broadcast gave %g", root);
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

TEST(StreamsGroups, GroupOnAStream) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    mclStream_t stream = nullptr;
    if (!ctx.ok(mclStreamCreate(&stream), "mclStreamCreate")) return;
    int peer = 1 - ctx.rank();
    std::vector<int32_t> out = patternBuffer(ctx.rank(), kLarge);
    std::vector<int32_t> in(kLarge, -1);
    int32_t one = 1, sum = 0;
    ctx.ok(mclGroupStart(), "mclGroupStart");
    ctx.ok(mclSend(out.data(), kLarge, mclInt32, peer, comm, stream), "send");
    ctx.ok(mclRecv(in.data(), kLarge, mclInt32, peer, comm, stream), "recv");
    ctx.ok(mclAllReduce(&one, &sum, 1, mclInt32, mclSum, comm, stream),
           "all-reduce");
    ctx.ok(mclGroupEnd(), "mclGroupEnd on a stream");
    mclResult_t state = mclStreamQuery(stream);
    if (state != mclInProgress && state != mclSuccess)
      ctx.fail("mclStreamQuery: %s", mclGetErrorString(state));
    if (!ctx.ok(mclStreamSynchronize(stream), "mclStreamSynchronize")) return;
    checkPattern(ctx, in, peer, "grouped exchange on a stream");
    if (sum != 2) ctx.fail("grouped all-reduce on a stream gave %d", sum);
    ctx.ok(mclStreamDestroy(stream), "mclStreamDestroy");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

TEST(StreamsGroups, GroupWithMixedStreamsIsRejected) {
  auto body = [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx, kTimeout);
    if (comm == nullptr) return;
    mclStream_t stream = nullptr;
    if (!ctx.ok(mclStreamCreate(&stream), "mclStreamCreate")) return;
    int32_t a = 1, b = 0, c = 0;
    ctx.ok(mclGroupStart(), "mclGroupStart");
    ctx.ok(mclAllReduce(&a, &b, 1, mclInt32, mclSum, comm, stream),
           "all-reduce on the stream");
    expectError(ctx, mclAllReduce(&a, &c, 1, mclInt32, mclSum, comm, nullptr),
                mclInvalidUsage, "all-reduce on another stream",
                {"same stream"});
    expectError(ctx, mclGroupEnd(), mclInvalidUsage, "mclGroupEnd",
                {"group was not run", "same stream"});
    ctx.ok(mclStreamSynchronize(stream), "mclStreamSynchronize");
    if (b != 0 || c != 0) ctx.fail("the rejected group ran");
    expectAllReduceWorks(ctx, comm, "a rejected group");
    ctx.ok(mclStreamDestroy(stream), "mclStreamDestroy");
    ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
  };
  EXPECT_TRUE(runRanks(2, body, kBound));
}

}  // namespace
}  // namespace mcl::test
