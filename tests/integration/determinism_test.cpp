// Reproducibility: with a given communicator size and algorithm, a
// floating-point reduction gives bitwise the same result on every rank and
// from run to run (separate processes, separate communicators). The inputs
// are random floats of mixed magnitudes, whose sums depend on the order of
// additions, so the check has teeth: the algorithms themselves (different
// orders) must disagree somewhere.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "multiprocess.h"

namespace mcl::test {
namespace {

constexpr size_t kCount = 100003;
constexpr int kRanks = 3;
const char* const kAlgorithms[] = {"ring", "tree", "direct",
                                   "halving_doubling"};

std::vector<float> randomInput(int rank) {
  std::mt19937 rng(1234 + static_cast<unsigned>(rank));
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::uniform_int_distribution<int> scale(-6, 6);
  std::vector<float> v(kCount);
  for (float& x : v) x = std::ldexp(value(rng), scale(rng));
  return v;
}

uint64_t fingerprint(const std::vector<float>& v) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the bytes
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  for (size_t i = 0; i < v.size() * sizeof(float); ++i)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// Each rank all-reduces its input with `algo` (twice, in place and out of
// place), checks that every rank got the same bytes, and rank 0 writes the
// fingerprint to `file`.
void runOnce(const char* algo, const std::string& file) {
  ASSERT_TRUE(runRanks(kRanks, [&](RankContext& ctx) {
    setenv("MCL_ALGO", (std::string("allreduce:") + algo).c_str(), 1);
    mclComm_t comm = initComm(ctx);
    if (comm == nullptr) return;
    std::vector<float> in = randomInput(ctx.rank());
    std::vector<float> out(kCount), inPlace = in;
    if (!ctx.ok(mclAllReduce(in.data(), out.data(), kCount, mclFloat32, mclSum,
                             comm, nullptr),
                "allreduce") ||
        !ctx.ok(mclAllReduce(inPlace.data(), inPlace.data(), kCount, mclFloat32,
                             mclSum, comm, nullptr),
                "allreduce in place"))
      return;
    if (inPlace != out)
      ctx.fail("%s: in place differs from out of place", algo);
    uint64_t mine = fingerprint(out);
    std::vector<uint64_t> all(kRanks);
    if (!ctx.ok(mclAllGather(&mine, all.data(), 1, mclUint64, comm, nullptr),
                "allgather"))
      return;
    for (int r = 0; r < kRanks; ++r)
      if (all[size_t(r)] != mine)
        ctx.fail("%s: rank %d's result differs from rank %d's", algo, r,
                 ctx.rank());
    if (ctx.rank() == 0) std::ofstream(file) << mine;
    ctx.ok(mclCommDestroy(comm), "destroy");
  }));
}

uint64_t readFingerprint(const std::string& file) {
  uint64_t v = 0;
  std::ifstream(file) >> v;
  return v;
}

TEST(Determinism, EveryAllReduceAlgorithmIsBitwiseReproducible) {
  const std::string base =
      "/tmp/mcl-determinism-" + std::to_string(getpid()) + "-";
  std::vector<uint64_t> first;
  for (const char* algo : kAlgorithms) {
    SCOPED_TRACE(algo);
    runOnce(algo, base + "1");
    runOnce(algo, base + "2");
    uint64_t a = readFingerprint(base + "1");
    uint64_t b = readFingerprint(base + "2");
    EXPECT_NE(a, 0u);
    EXPECT_EQ(a, b) << "two runs of " << algo << " differ";
    first.push_back(a);
  }
  std::remove((base + "1").c_str());
  std::remove((base + "2").c_str());
  bool someDiffer = false;
  for (uint64_t f : first) someDiffer |= f != first.front();
  EXPECT_TRUE(someDiffer) << "all algorithms agree bit for bit: the inputs do "
                             "not exercise the order of additions";
}

// Ties the kernels resolve by operand order: max of +0 and -0 (the first
// wins) and sums of NaNs with different payloads. Every rank must still get
// the same bits, whatever the algorithm.
TEST(Determinism, TiesResolveAlikeOnEveryRank) {
  for (const char* algo : kAlgorithms) {
    SCOPED_TRACE(algo);
    EXPECT_TRUE(runRanks(kRanks, [&](RankContext& ctx) {
      setenv("MCL_ALGO", (std::string("allreduce:") + algo).c_str(), 1);
      mclComm_t comm = initComm(ctx);
      if (comm == nullptr) return;
      const float zero = ctx.rank() % 2 == 0 ? 0.0f : -0.0f;
      uint32_t nanBits = 0x7fc00001u + uint32_t(ctx.rank());
      float nan;
      std::memcpy(&nan, &nanBits, sizeof nan);
      for (mclRedOp_t op : {mclMax, mclMin, mclSum}) {
        std::vector<float> v(64, op == mclSum ? nan : zero);
        if (!ctx.ok(mclAllReduce(v.data(), v.data(), v.size(), mclFloat32, op,
                                 comm, nullptr),
                    "allreduce"))
          return;
        uint32_t mine;
        std::memcpy(&mine, v.data(), sizeof mine);
        std::vector<uint32_t> all(kRanks);
        ctx.ok(mclAllGather(&mine, all.data(), 1, mclUint32, comm, nullptr),
               "allgather");
        for (int r = 0; r < kRanks; ++r)
          if (all[size_t(r)] != mine)
            ctx.fail("op %d: rank %d got bits %08x, rank %d %08x", int(op), r,
                     all[size_t(r)], ctx.rank(), mine);
      }
      ctx.ok(mclCommDestroy(comm), "destroy");
    }));
  }
}

}  // namespace
}  // namespace mcl::test
