// include/mcl/mcl.hpp, the C++ layer over the C API, on real ranks: every
// collective through containers and raw spans, streams and groups, split,
// the sizes it checks before a call, and errors as mcl::Error carrying the
// code and the message that names the argument or rank.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mcl/mcl.hpp>
#include <numeric>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "multiprocess.h"

namespace mcl::test {
namespace {

// Runs body on every rank with a communicator of the C++ layer; a stray
// exception fails the rank with its message.
::testing::AssertionResult onRanks(
    int nranks, const std::function<void(RankContext&, Communicator&)>& body) {
  return runRanks(nranks, [&](RankContext& ctx) {
    try {
      UniqueId id;
      std::memcpy(&id.raw(), &ctx.id(), sizeof(mclUniqueId));
      Communicator comm(ctx.nranks(), id, ctx.rank(),
                        Config().timeoutSeconds(30).name("mcl.hpp test"));
      body(ctx, comm);
    } catch (const Error& e) {
      ctx.fail("mcl::Error %d: %s", static_cast<int>(e.code()), e.what());
    }
  });
}

// The exception a call throws: its code and message.
template <typename Call>
std::pair<mclResult_t, std::string> thrown(Call&& call) {
  try {
    call();
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  return {mclSuccess, ""};
}

TEST(CppHeader, EveryCollectiveThroughContainers) {
  EXPECT_TRUE(onRanks(3, [](RankContext& ctx, Communicator& comm) {
    const int r = comm.rank();
    const int n = comm.size();
    if (r != ctx.rank() || n != 3) ctx.fail("rank %d of %d", r, n);

    std::vector<float> sum(5, static_cast<float>(r + 1));
    comm.allReduce(sum);  // in place
    if (sum != std::vector<float>(5, 6.0f)) ctx.fail("allReduce in place");

    const std::array<int64_t, 2> mine = {r, -r};
    std::vector<int64_t> all(6), maxes(2);
    comm.allGather(mine, all);
    if (all != std::vector<int64_t>{0, 0, 1, -1, 2, -2}) ctx.fail("allGather");
    comm.allReduce(mine, maxes, mclMax);
    if (maxes != std::vector<int64_t>{2, 0}) ctx.fail("allReduce max");

    double root[4] = {0, 0, 0, 0};
    if (r == 1) std::iota(root, root + 4, 1.0);
    comm.broadcast(root, 1);
    if (root[3] != 4.0) ctx.fail("broadcast of a C array");

    std::vector<uint32_t> ones(4, 1u), total(r == 0 ? 4 : 0);
    comm.reduce(ones, total, 0);
    if (r == 0 && total != std::vector<uint32_t>(4, 3u)) ctx.fail("reduce");

    std::vector<int32_t> blocks(6), mineOut(2);
    std::iota(blocks.begin(), blocks.end(), 0);
    comm.reduceScatter(blocks, mineOut);
    if (mineOut != std::vector<int32_t>{6 * r, 6 * r + 3})
      ctx.fail("reduceScatter");

    std::vector<int32_t> to(3), from(3);
    for (int j = 0; j < 3; ++j) to[static_cast<size_t>(j)] = 10 * r + j;
    comm.allToAll(to, from);
    for (int i = 0; i < 3; ++i)
      if (from[static_cast<size_t>(i)] != 10 * i + r) ctx.fail("allToAll");

    // Raw memory and std::span, around the ring in one group.
    std::vector<float> out(8, static_cast<float>(r)), in(8);
    {
      Group group;
      comm.send(Span<const float>(out.data(), out.size()), (r + 1) % n);
      comm.recv(std::span<float>(in), (r + n - 1) % n);
      group.end();
    }
    if (in[7] != static_cast<float>((r + n - 1) % n)) ctx.fail("send/recv");

    // On a stream: returns at once; synchronize waits.
    Stream stream;
    std::vector<uint16_t> bf16(16, 0x3f80);  // bfloat16 1.0, as bits
    comm.allReduce(bf16, mclSum, stream, mclBfloat16);
    stream.synchronize();
    if (!stream.idle() || bf16[0] != 0x4040) ctx.fail("bfloat16 on a stream");
    comm.barrier();
    if (comm.asyncError() != mclSuccess) ctx.fail("asyncError");
    if (comm.topology().find("\"hosts\"") == std::string::npos)
      ctx.fail("topology: %s", comm.topology().substr(0, 80).c_str());
  }));
}

TEST(CppHeader, SizesAreCheckedBeforeTheCall) {
  EXPECT_TRUE(onRanks(2, [](RankContext& ctx, Communicator& comm) {
    std::vector<float> four(4), five(5), seven(7);
    const std::pair<const char*, std::function<void()>> cases[] = {
        {"recv holds 5 elements; it must hold send's 4 x 2 ranks = 8",
         [&] { comm.allGather(four, five); }},
        {"send holds 5 elements; it must hold recv's 4 x 2 ranks = 8",
         [&] { comm.reduceScatter(five, four); }},
        {"send holds 4 elements and recv 5",
         [&] { comm.allReduce(four, five); }},
        {"7 elements do not split into 2 equal blocks",
         [&] { comm.allToAll(seven, seven); }},
    };
    for (const auto& [want, call] : cases) {
      auto [code, message] = thrown(call);
      if (code != mclInvalidArgument || message.find(want) == std::string::npos)
        ctx.fail("got %d '%s', expected '%s'", static_cast<int>(code),
                 message.c_str(), want);
    }
    // Nothing was issued: the communicator still works.
    comm.allReduce(four);
  }));
}

TEST(CppHeader, ErrorsCarryTheCodeAndTheLastError) {
  auto [code, message] = thrown([] {
    Communicator comm(2, UniqueId(), 5);  // rank 5 of 2
  });
  EXPECT_EQ(code, mclInvalidArgument);
  EXPECT_NE(message.find("mclCommInitRankConfig"), std::string::npos)
      << message;
  EXPECT_NE(message.find("rank"), std::string::npos) << message;
  std::tie(code, message) =
      thrown([] { UniqueId::fromString("mcl1:nonsense"); });
  EXPECT_EQ(code, mclInvalidArgument) << message;
}

TEST(CppHeader, SplitAndMoves) {
  EXPECT_TRUE(onRanks(3, [](RankContext& ctx, Communicator& comm) {
    const int r = comm.rank();
    Communicator sub = comm.split(r == 2 ? MCL_SPLIT_NOCOLOR : 0, -r);
    if ((r == 2) == static_cast<bool>(sub)) ctx.fail("split membership");
    if (!sub) return;
    Communicator moved = std::move(sub);
    if (sub || moved.size() != 2 || moved.rank() != 1 - r)
      ctx.fail("moved: size %d rank %d", moved.size(), moved.rank());
    std::vector<int32_t> v = {r};
    moved.allReduce(v);
    if (v[0] != 1) ctx.fail("sub allReduce %d", v[0]);
  }));
}

TEST(CppHeader, UniqueIdRoundTripsThroughItsString) {
  UniqueId id = UniqueId::create();
  UniqueId again = UniqueId::fromString(id.toString());
  EXPECT_EQ(std::memcmp(&id.raw(), &again.raw(), sizeof(mclUniqueId)), 0);
}

}  // namespace
}  // namespace mcl::test
