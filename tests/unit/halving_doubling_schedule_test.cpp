// Tests for the recursive halving-doubling schedule
// (algorithms/schedules/halving_doubling.h) for 1..16 ranks, simulated
// symbolically: each block is the set of ranks whose input it holds. After
// the folds and the halving steps, active rank i must hold block i with
// every rank's input; after the doubling steps and the returns, every rank
// must hold every block.
#include "algorithms/schedules/halving_doubling.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mcl::schedules {
namespace {

using RankSet = uint32_t;
RankSet allOf(int n) { return (RankSet{1} << n) - 1; }

class HalvingDoublingTest : public ::testing::TestWithParam<int> {
 protected:
  int n() const { return GetParam(); }
};

TEST_P(HalvingDoublingTest, ActiveRanksAreAPowerOfTwoAndFoldsPairUp) {
  const int p = halvingDoublingRole(n(), 0).activeCount;
  EXPECT_LE(p, n());
  EXPECT_GT(2 * p, n());
  EXPECT_EQ(p & (p - 1), 0) << p;
  std::vector<int> seen(size_t(p), 0);
  for (int r = 0; r < n(); ++r) {
    HalvingDoublingRole role = halvingDoublingRole(n(), r);
    if (role.index >= 0) {
      ++seen[size_t(role.index)];
      EXPECT_EQ(activeRank(n(), role.index), r);
    }
    if (role.foldPartner >= 0) {
      HalvingDoublingRole other = halvingDoublingRole(n(), role.foldPartner);
      EXPECT_EQ(other.foldPartner, r);
      EXPECT_NE(role.index < 0, other.index < 0)
          << "of a fold pair exactly one is active: " << r;
    } else {
      EXPECT_GE(role.index, 0)
          << "rank " << r << " is neither active nor folded";
    }
  }
  for (int i = 0; i < p; ++i) EXPECT_EQ(seen[size_t(i)], 1) << "index " << i;
}

TEST_P(HalvingDoublingTest, PartnersAgreeOnEveryExchange) {
  for (int r = 0; r < n(); ++r) {
    std::vector<HalvingStep> mine = halvingSteps(n(), r);
    for (size_t k = 0; k < mine.size(); ++k) {
      std::vector<HalvingStep> theirs = halvingSteps(n(), mine[k].peer);
      ASSERT_EQ(theirs.size(), mine.size());
      EXPECT_EQ(theirs[k].peer, r);
      EXPECT_EQ(theirs[k].keepLo, mine[k].sendLo);
      EXPECT_EQ(theirs[k].keepHi, mine[k].sendHi);
      EXPECT_EQ(theirs[k].sendLo, mine[k].keepLo);
      EXPECT_EQ(theirs[k].sendHi, mine[k].keepHi);
    }
  }
}

TEST_P(HalvingDoublingTest, EveryRankEndsWithEveryBlockFullyReduced) {
  const int p = halvingDoublingRole(n(), 0).activeCount;
  // blocks[r][b]: whose inputs rank r's block b holds.
  std::vector<std::vector<RankSet>> blocks(static_cast<size_t>(n()));
  for (int r = 0; r < n(); ++r)
    blocks[size_t(r)].assign(size_t(p), RankSet{1} << r);
  for (int r = 0; r < n(); ++r) {  // folds
    HalvingDoublingRole role = halvingDoublingRole(n(), r);
    if (role.index >= 0 && role.foldPartner >= 0)
      for (int b = 0; b < p; ++b)
        blocks[size_t(r)][size_t(b)] |=
            blocks[size_t(role.foldPartner)][size_t(b)];
  }
  std::vector<std::vector<HalvingStep>> steps;
  for (int r = 0; r < n(); ++r) steps.push_back(halvingSteps(n(), r));
  const size_t rounds = steps[size_t(activeRank(n(), 0))].size();
  for (size_t k = 0; k < rounds; ++k) {
    auto before = blocks;
    for (int r = 0; r < n(); ++r) {
      if (steps[size_t(r)].empty()) continue;
      const HalvingStep& s = steps[size_t(r)][k];
      for (int b = s.keepLo; b < s.keepHi; ++b)
        blocks[size_t(r)][size_t(b)] |= before[size_t(s.peer)][size_t(b)];
    }
  }
  for (int i = 0; i < p; ++i)
    EXPECT_EQ(blocks[size_t(activeRank(n(), i))][size_t(i)], allOf(n()))
        << "active " << i << " after halving";
  // Doubling: a rank's block b is complete once it holds it; track holders.
  std::vector<std::vector<bool>> has(static_cast<size_t>(n()),
                                     std::vector<bool>(static_cast<size_t>(p)));
  for (int i = 0; i < p; ++i) has[size_t(activeRank(n(), i))][size_t(i)] = true;
  for (size_t k = rounds; k-- > 0;) {
    auto before = has;
    for (int r = 0; r < n(); ++r) {
      if (steps[size_t(r)].empty()) continue;
      const HalvingStep& s = steps[size_t(r)][k];
      for (int b = s.sendLo; b < s.sendHi; ++b) {
        EXPECT_TRUE(before[size_t(s.peer)][size_t(b)])
            << "rank " << s.peer << " sends block " << b << " it lacks";
        has[size_t(r)][size_t(b)] = true;
      }
    }
  }
  for (int r = 0; r < n(); ++r) {  // returns to folded ranks
    HalvingDoublingRole role = halvingDoublingRole(n(), r);
    if (role.index < 0) has[size_t(r)] = has[size_t(role.foldPartner)];
  }
  for (int r = 0; r < n(); ++r)
    for (int b = 0; b < p; ++b)
      EXPECT_TRUE(has[size_t(r)][size_t(b)]) << "rank " << r << " block " << b;
}

INSTANTIATE_TEST_SUITE_P(Ranks1To16, HalvingDoublingTest,
                         ::testing::Range(1, 17),
                         [](const ::testing::TestParamInfo<int>& param) {
                           return "n" + std::to_string(param.param);
                         });

}  // namespace
}  // namespace mcl::schedules
