// MCL_CHECK's fingerprints: fields a collective does not use never make two
// calls differ, and a mismatch names the first rank that differs from
// rank 0 with both calls.
#include "core/run/call_check.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.h"

namespace mcl {
namespace {

OpArgs call(Collective kind, size_t count, mclDataType_t type, mclRedOp_t op,
            int root) {
  OpArgs a;
  a.kind = kind;
  a.count = count;
  a.type = type;
  a.op = op;
  a.root = root;
  return a;
}

std::string mismatchMessage(const std::vector<CallFingerprint>& all) {
  try {
    compareFingerprints(all, "comm test rank 0/3");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), mclInvalidUsage);
    return e.what();
  }
  return "";
}

TEST(CallCheck, UnusedFieldsNeverDiffer) {
  // All-gather has no op or root; a barrier has no count or type either.
  auto a = fingerprintOf(call(Collective::AllGather, 8, mclFloat32, mclSum, 3),
                         0, 0, 1);
  auto b = fingerprintOf(call(Collective::AllGather, 8, mclFloat32, mclMax, -1),
                         0, 0, 1);
  EXPECT_EQ(mismatchMessage({a, b}), "");
  auto c = fingerprintOf(call(Collective::Barrier, 0, mclUint8, mclSum, -1), 4,
                         0, 1);
  auto d = fingerprintOf(call(Collective::Barrier, 7, mclFloat64, mclAvg, 1), 4,
                         0, 1);
  EXPECT_EQ(mismatchMessage({c, d, c}), "");
  // An all-reduce has no root.
  auto e = fingerprintOf(call(Collective::AllReduce, 8, mclInt32, mclSum, 0), 1,
                         0, 1);
  auto f = fingerprintOf(call(Collective::AllReduce, 8, mclInt32, mclSum, 2), 1,
                         0, 1);
  EXPECT_EQ(mismatchMessage({e, f}), "");
}

TEST(CallCheck, UsedFieldsDifferAndAreNamed) {
  auto base = call(Collective::Reduce, 100, mclBfloat16, mclMax, 1);
  auto mine = fingerprintOf(base, 6, 0, 1);
  auto otherRoot = base;
  otherRoot.root = 2;
  std::string m =
      mismatchMessage({mine, mine, fingerprintOf(otherRoot, 6, 0, 1)});
  EXPECT_NE(m.find("comm test rank 0/3: MCL_CHECK: collective #7"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("rank 0 calls reduce(count 100, bfloat16, max, root 1)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("rank 2 calls reduce(count 100, bfloat16, max, root 2)"),
            std::string::npos)
      << m;
  auto otherCount = base;
  otherCount.count = 99;
  EXPECT_NE(mismatchMessage({mine, fingerprintOf(otherCount, 6, 0, 1)})
                .find("rank 1 calls reduce(count 99"),
            std::string::npos);
}

TEST(CallCheck, GroupPlaceIsCompared) {
  auto op = call(Collective::AllReduce, 4, mclFloat32, mclSum, -1);
  std::string m =
      mismatchMessage({fingerprintOf(op, 0, 0, 2), fingerprintOf(op, 0, 0, 3)});
  EXPECT_NE(m.find("(collective 1 of 2 in a group)"), std::string::npos) << m;
  EXPECT_NE(m.find("rank 0's group has 2 collectives on this communicator, "
                   "rank 1's 3"),
            std::string::npos)
      << m;
  EXPECT_EQ(describeCall(fingerprintOf(op, 0, 0, 1)),
            "all-reduce(count 4, float, sum)");
}

}  // namespace
}  // namespace mcl
