// The tuner (algorithms/tuner.h): what it picks at the ends of the size
// range on every kind of link, that its pick is the cheapest prediction,
// that its cache answers as a fresh prediction would, and that predictions
// grow with the size.
#include "algorithms/tuner.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "algorithms/algorithm_table.h"
#include "base/error.h"

namespace mcl {
namespace {

const char* const kKinds[] = {"shm", "tcp", "emulated rdma", "rdma"};

AlgoContext contextFor(const char* kind, bool crowded, int nranks) {
  AlgoContext ctx;
  ctx.nranks = nranks;
  ctx.link = defaultLinkModel(kind, crowded);
  ctx.maxStepBytes = 256 * 1024;
  return ctx;
}

OpArgs allReduceOf(size_t bytes) {
  OpArgs op;
  op.kind = Collective::AllReduce;
  op.type = mclUint8;
  op.count = bytes;
  return op;
}

TEST(Tuner, SmallAllReducesGoDirectLargeOnesByBandwidth) {
  for (const char* kind : kKinds)
    for (bool crowded : {false, true})
      for (int n : {2, 3, 4, 8}) {
        SCOPED_TRACE(std::string(kind) + (crowded ? " crowded" : "") +
                     " n=" + std::to_string(n));
        const AlgoContext ctx = contextFor(kind, crowded, n);
        EXPECT_EQ(tunedAlgorithm(Collective::AllReduce, allReduceOf(8), ctx),
                  Algorithm::Direct);
        const Algorithm large = tunedAlgorithm(
            Collective::AllReduce, allReduceOf(size_t{64} << 20), ctx);
        EXPECT_NE(large, Algorithm::Direct);
      }
}

// Measured (perf/tune/algo_sweep.py allreduce -np 2, float and bf16): over
// shared memory, halving-doubling led the ring from 8 KiB to 32 MiB; the
// decode step's 4-64 KiB all-reduces must not go to the ring.
TEST(Tuner, TwoRanksOnSharedMemoryPreferHalvingDoublingToTheRing) {
  const AlgoContext ctx = contextFor("shm", false, 2);
  for (size_t bytes = 8 * 1024; bytes <= (size_t{32} << 20); bytes *= 2) {
    SCOPED_TRACE(bytes);
    EXPECT_EQ(tunedAlgorithm(Collective::AllReduce, allReduceOf(bytes), ctx),
              Algorithm::HalvingDoubling);
  }
}

TEST(Tuner, PicksTheCheapestPredictionAndItsCacheAgrees) {
  for (const char* kind : kKinds)
    for (int n : {2, 3, 5}) {
      AlgoContext ctx = contextFor(kind, false, n);
      auto uncached = ctx;
      uncached.tunerCache = nullptr;
      // Twice over: the second pass answers from the cache, where
      // neighbouring sizes share slots.
      for (int pass = 0; pass < 2; ++pass)
        for (size_t bytes = 1; bytes <= (size_t{1} << 28); bytes = bytes * 3) {
          const OpArgs op = allReduceOf(bytes);
          const Algorithm picked =
              tunedAlgorithm(Collective::AllReduce, op, ctx);
          ASSERT_EQ(picked, tunedAlgorithm(Collective::AllReduce, op, uncached))
              << kind << " n=" << n << " bytes=" << bytes;
          const double best = predictUs(Collective::AllReduce, picked, bytes, n,
                                        ctx.maxStepBytes, ctx.link);
          for (const AlgorithmInfo& a : algorithmTable()) {
            if (a.collective != Collective::AllReduce) continue;
            EXPECT_LE(best, predictUs(Collective::AllReduce, a.id, bytes, n,
                                      ctx.maxStepBytes, ctx.link))
                << a.name << " beats the pick at " << bytes;
          }
        }
    }
}

TEST(Tuner, PredictionsGrowWithTheSize) {
  // Across the cache boundary too: a buffer that outgrows the caches must
  // not look cheaper than a smaller one.
  for (const char* kind : kKinds)
    for (bool crowded : {false, true})
      for (const AlgorithmInfo& a : algorithmTable())
        for (int n : {2, 4, 7}) {
          const LinkModel link = defaultLinkModel(kind, crowded);
          double last = 0;
          for (size_t bytes = 8; bytes <= (size_t{64} << 20); bytes *= 2) {
            const double us =
                predictUs(a.collective, a.id, bytes, n, 256 * 1024, link);
            EXPECT_GE(us, last) << kind << (crowded ? " crowded " : " ")
                                << a.name << " n=" << n << " bytes=" << bytes;
            last = us;
          }
        }
}

TEST(Tuner, DoubledCablesCarryTwiceTheBytesOnHardwareOnly) {
  for (const char* kind : {"rdma", "emulated rdma", "tcp"}) {
    LinkModel one = defaultLinkModel(kind, false);
    LinkModel two = one;
    two.wires = 2;
    const size_t bytes = size_t{64} << 20;
    const double single = predictUs(Collective::AllReduce, Algorithm::Ring,
                                    bytes, 2, 1 << 20, one);
    const double doubled = predictUs(Collective::AllReduce, Algorithm::Ring,
                                     bytes, 2, 1 << 20, two);
    if (std::string(kind) == "rdma") {
      EXPECT_LT(doubled, 0.75 * single);
    } else {
      EXPECT_EQ(doubled, single) << kind;
    }
  }
}

TEST(Tuner, CrowdedHostsMakeEveryHopDearer) {
  for (const char* kind : kKinds)
    EXPECT_GT(defaultLinkModel(kind, true).alphaUs,
              defaultLinkModel(kind, false).alphaUs)
        << kind;
}

// The cost comes from the algorithm's row of the table: a pair the table
// lacks has none, and pricing it is an error rather than a free win.
TEST(Tuner, AnAlgorithmOutsideTheTableHasNoPrice) {
  const LinkModel link = defaultLinkModel("shm", false);
  try {
    predictUs(Collective::AllToAll, Algorithm::Ring, 4096, 4, 65536, link);
    FAIL() << "priced";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclInternalError);
    EXPECT_NE(std::string(e.what()).find("alltoall has no algorithm ring"),
              std::string::npos)
        << e.what();
  }
  for (const AlgorithmInfo& a : algorithmTable()) {
    const CostShape s = a.cost(4);
    EXPECT_GT(s.hops + s.sent, 0)
        << collectiveName(a.collective) << " " << a.name;
  }
}

}  // namespace
}  // namespace mcl
