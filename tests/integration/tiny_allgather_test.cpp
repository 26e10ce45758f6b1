// The tiny all-gather (blocks of at most 1 KiB, every rank on one host): it
// copies the blocks out without steps while its peers are already there,
// and hands the rest to steps when one is late. Each rank in turn arrives
// late, so the hand-over happens at every position, in place and out of
// place, with one-, four- and eight-byte elements, and blocks at the
// path's limit and just past it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "multiprocess.h"
#include "reference.h"

namespace mcl::test {
namespace {

void runLateRankCases(RankContext& ctx) {
  mclComm_t comm = initComm(ctx, 30);
  if (comm == nullptr) return;
  const int n = ctx.nranks();
  for (mclDataType_t type : {mclUint8, mclFloat32, mclFloat64})
    for (size_t blockBytes :
         {size_t{8}, size_t{200}, size_t{1024}, size_t{1032}})
      for (bool inPlace : {false, true})
        for (int late = 0; late < n; ++late) {
          const size_t es = typeBytes(type);
          const size_t count = blockBytes / es;
          const auto value = [&](int rank, size_t i) {
            return movementInput(type, rank, i);
          };
          Bytes out(count * es * size_t(n), 0xA5);
          Bytes in = makeBuffer(type, count,
                                [&](size_t i) { return value(ctx.rank(), i); });
          std::byte* own = reinterpret_cast<std::byte*>(out.data()) +
                           size_t(ctx.rank()) * count * es;
          if (inPlace) std::memcpy(own, in.data(), in.size());
          if (ctx.rank() == late) usleep(20000);  // its peers poll, then wait
          if (!ctx.ok(mclAllGather(inPlace ? static_cast<void*>(own)
                                           : static_cast<void*>(in.data()),
                                   out.data(), count, type, comm, nullptr),
                      "mclAllGather"))
            return;
          for (int r = 0; r < n; ++r) {
            Bytes want =
                makeBuffer(type, count, [&](size_t i) { return value(r, i); });
            if (std::memcmp(out.data() + size_t(r) * count * es, want.data(),
                            want.size()) != 0) {
              ctx.fail("%s, %zu-byte blocks %s, rank %d late: rank %d's block",
                       typeLabel(type), blockBytes,
                       inPlace ? "in place" : "out of place", late, r);
              return;
            }
          }
        }
  ctx.ok(mclCommDestroy(comm), "mclCommDestroy");
}

TEST(TinyAllGather, LateRanksAtEveryPosition) {
  for (int n : {2, 3, 4})
    EXPECT_TRUE(runRanks(n, runLateRankCases)) << n << " ranks";
}

}  // namespace
}  // namespace mcl::test
