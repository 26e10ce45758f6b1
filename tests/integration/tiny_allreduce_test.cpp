// The tiny all-reduce (a few bytes, every rank on one host): it folds
// without steps while its peers are already there, and hands the rest to
// steps when one is late. Each rank in turn arrives late, so the hand-over
// happens at every position of the fold, in place and out of place; the
// results must match the direct all-reduce's bit for bit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "multiprocess.h"
#include "reference.h"

namespace mcl::test {
namespace {

void runLateRankAllReduces(RankContext& ctx) {
  mclComm_t comm = initComm(ctx, 30);
  if (comm == nullptr) return;
  const int n = ctx.nranks();
  for (mclDataType_t type : {mclFloat32, mclInt32, mclBfloat16})
    for (mclRedOp_t op : {mclSum, mclAvg, mclMax, mclProd})
      for (size_t count : {size_t{1}, size_t{7}, size_t{32}})
        for (bool inPlace : {false, true})
          for (int late = 0; late < n; ++late) {
            const size_t es = typeBytes(type);
            auto in = makeBuffer(type, count, [&](size_t i) {
              return reductionInput(type, op, n, ctx.rank(), i);
            });
            Bytes out = inPlace ? in : Bytes(count * es, 0xA5);
            // A late rank: its peers poll, then wait through steps.
            if (ctx.rank() == late) usleep(20000);
            if (!ctx.ok(
                    mclAllReduce(inPlace ? out.data() : in.data(), out.data(),
                                 count, type, op, comm, nullptr),
                    "mclAllReduce"))
              return;
            uint8_t want[8];
            for (size_t i = 0; i < count; ++i) {
              encodeReduction(type, op, n, exactReduction(type, op, n, i),
                              want);
              if (std::memcmp(out.data() + i * es, want, es) != 0) {
                ctx.fail("%s %s count %zu %s, rank %d late: element %zu",
                         typeLabel(type), opLabel(op), count,
                         inPlace ? "in place" : "out of place", late, i);
                return;
              }
            }
          }
  ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
}

TEST(TinyAllReduce, LateRanksAtEveryPosition) {
  for (int n : {2, 3, 4})
    EXPECT_TRUE(runRanks(n, runLateRankAllReduces)) << n << " ranks";
}

}  // namespace
}  // namespace mcl::test
