// mclRedOpCreatePreMulSum / mclRedOpDestroy: each rank's input multiplied by
// the scalar, then summed, in all-reduce, reduce and reduce-scatter; the
// scalar read at creation or when each call runs; ops that do not fit the
// call, or are gone, refused with the reason.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "multiprocess.h"

namespace mcl::test {
namespace {

constexpr int kRanks = 3;

TEST(PreMulSum, ScalesEveryInputBeforeSumming) {
  EXPECT_TRUE(runRanks(kRanks, [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx);
    if (comm == nullptr) return;
    float half = 0.5f;
    mclRedOp_t op;
    if (!ctx.ok(mclRedOpCreatePreMulSum(&op, &half, mclFloat32,
                                        mclScalarHostImmediate, comm),
                "create"))
      return;
    if (op < mclNumOps) ctx.fail("custom op %d collides with built-ins", op);
    half = 100.0f;  // immediate: the value at creation counts
    // Rank r contributes r + 1 (and i in element i): 0.5 * sum.
    const size_t count = 70001;  // several rounds on every transport
    std::vector<float> in(count), out(count);
    for (size_t i = 0; i < count; ++i)
      in[i] = float(ctx.rank() + 1) + float(i % 7);
    auto want = [&](size_t i) { return 0.5f * (6.0f + 3.0f * float(i % 7)); };
    if (!ctx.ok(mclAllReduce(in.data(), out.data(), count, mclFloat32, op, comm,
                             nullptr),
                "allreduce"))
      return;
    for (size_t i = 0; i < count; i += 97)
      if (out[i] != want(i))
        ctx.fail("allreduce element %zu: %g, want %g", i, out[i], want(i));
    std::vector<float> root(count, -1.0f);
    ctx.ok(mclReduce(in.data(), root.data(), count, mclFloat32, op, 1, comm,
                     nullptr),
           "reduce");
    if (ctx.rank() == 1 && root[5] != want(5))
      ctx.fail("reduce: %g, want %g", root[5], want(5));
    // Reduce-scatter in place: each rank's block of the same input.
    std::vector<float> blocks(kRanks * 100);
    for (size_t i = 0; i < blocks.size(); ++i)
      blocks[i] = float(ctx.rank() + 1) + float(i % 7);
    float* mine = blocks.data() + ctx.rank() * 100;
    ctx.ok(mclReduceScatter(blocks.data(), mine, 100, mclFloat32, op, comm,
                            nullptr),
           "reducescatter");
    for (size_t i = 0; i < 100; ++i)
      if (mine[i] != want(size_t(ctx.rank()) * 100 + i)) {
        ctx.fail("reducescatter element %zu: %g", i, mine[i]);
        break;
      }
    ctx.ok(mclRedOpDestroy(op, comm), "destroy");
    ctx.ok(mclCommDestroy(comm), "destroy comm");
  }));
}

TEST(PreMulSum, DeviceResidenceReadsTheScalarWhenTheCallRuns) {
  EXPECT_TRUE(runRanks(2, [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx);
    if (comm == nullptr) return;
    int32_t factor = 2;
    mclRedOp_t op;
    if (!ctx.ok(mclRedOpCreatePreMulSum(&op, &factor, mclInt32, mclScalarDevice,
                                        comm),
                "create"))
      return;
    for (int32_t f : {2, -3, 10}) {
      factor = f;
      int32_t v = ctx.rank() + 1;  // 1 and 2
      ctx.ok(mclAllReduce(&v, &v, 1, mclInt32, op, comm, nullptr), "allreduce");
      if (v != 3 * f) ctx.fail("factor %d: %d, want %d", f, v, 3 * f);
    }
    ctx.ok(mclRedOpDestroy(op, comm), "destroy");
    ctx.ok(mclCommDestroy(comm), "destroy comm");
  }));
}

TEST(PreMulSum, OpsThatDoNotFitAreRefusedWithTheReason) {
  EXPECT_TRUE(runRanks(2, [](RankContext& ctx) {
    mclComm_t comm = initComm(ctx);
    if (comm == nullptr) return;
    float s = 1.0f;
    mclRedOp_t op;
    ctx.ok(mclRedOpCreatePreMulSum(&op, &s, mclFloat32, mclScalarHostImmediate,
                                   comm),
           "create");
    auto refused = [&](mclResult_t r, const char* says) {
      std::string msg = mclGetLastError(comm);
      if (r != mclInvalidArgument || msg.find(says) == std::string::npos)
        ctx.fail("result %d, message '%s' (wanted '%s')", r, msg.c_str(), says);
    };
    int32_t v = 1;
    refused(mclAllReduce(&v, &v, 1, mclInt32, op, comm, nullptr),
            "was made for float, the call passes int32");
    refused(mclRedOpCreatePreMulSum(&op, nullptr, mclFloat32,
                                    mclScalarHostImmediate, comm),
            "scalar is NULL");
    refused(mclRedOpCreatePreMulSum(&op, &s, mclFloat32,
                                    static_cast<mclScalarResidence_t>(7), comm),
            "residence 7");
    refused(mclRedOpDestroy(mclSum, comm), "built in");
    ctx.ok(mclRedOpDestroy(op, comm), "destroy");
    refused(mclRedOpDestroy(op, comm), "not a live op");
    float f = 1.0f;
    refused(mclAllReduce(&f, &f, 1, mclFloat32, op, comm, nullptr),
            "nor a live op of this communicator");
    // Invalid arguments leave the communicator usable.
    ctx.ok(mclAllReduce(&f, &f, 1, mclFloat32, mclSum, comm, nullptr),
           "allreduce after the refusals");
    if (f != 2.0f) ctx.fail("sum %g", f);
    ctx.ok(mclCommDestroy(comm), "destroy comm");
  }));
}

}  // namespace
}  // namespace mcl::test
