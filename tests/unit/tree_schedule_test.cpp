// Tests for the binary-tree schedules (algorithms/schedules/tree.h) for 1..16
// ranks: every tree spans all ranks from its root with consistent links, is
// no deeper than treeDepth, and the two trees of the double binary tree
// share no inner node.
#include "algorithms/schedules/tree.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

namespace mcl::schedules {
namespace {

class TreeScheduleTest : public ::testing::TestWithParam<int> {
 protected:
  int n() const { return GetParam(); }

  // Checks the tree that `links(rank)` describes and returns the root.
  template <class Links>
  int checkTree(Links links) {
    std::vector<TreeLinks> all;
    for (int r = 0; r < n(); ++r) all.push_back(links(r));
    int root = -1;
    for (int r = 0; r < n(); ++r) {
      const TreeLinks& t = all[size_t(r)];
      if (t.parent < 0) {
        EXPECT_EQ(root, -1) << "two roots: " << root << " and " << r;
        root = r;
      } else {
        EXPECT_GE(t.parent, 0);
        EXPECT_LT(t.parent, n());
        const TreeLinks& p = all[size_t(t.parent)];
        EXPECT_TRUE(p.children[0] == r || p.children[1] == r)
            << "rank " << r << "'s parent " << t.parent << " lacks it";
      }
      for (int c : t.children)
        if (c >= 0) {
          EXPECT_EQ(all[size_t(c)].parent, r) << "child " << c << " of " << r;
        }
      EXPECT_FALSE(t.children[0] < 0 && t.children[1] >= 0)
          << "rank " << r << ": the second child without the first";
    }
    // Every rank hangs from the root within treeDepth levels.
    for (int r = 0; r < n(); ++r) {
      int levels = 1;
      for (int at = r; all[size_t(at)].parent >= 0; at = all[size_t(at)].parent)
        if (++levels > n()) break;
      EXPECT_LE(levels, treeDepth(n())) << "rank " << r;
    }
    return root;
  }
};

TEST_P(TreeScheduleTest, RootedTreesSpanAllRanksFromTheRoot) {
  for (int root = 0; root < n(); ++root) {
    SCOPED_TRACE("root " + std::to_string(root));
    EXPECT_EQ(checkTree([&](int r) { return rootedTree(n(), root, r); }), root);
  }
}

TEST_P(TreeScheduleTest, DoubleTreesSpanAllRanksAndShareNoInnerNode) {
  EXPECT_EQ(checkTree([&](int r) { return doubleTree(n(), 0, r); }), 0);
  EXPECT_EQ(checkTree([&](int r) { return doubleTree(n(), 1, r); }), n() - 1);
  for (int r = 0; r < n(); ++r)
    EXPECT_FALSE(doubleTree(n(), 0, r).childCount() > 0 &&
                 doubleTree(n(), 1, r).childCount() > 0)
        << "rank " << r << " forwards in both trees";
}

TEST(TreeDepth, CountsHeapLevels) {
  EXPECT_EQ(treeDepth(1), 1);
  EXPECT_EQ(treeDepth(2), 2);
  EXPECT_EQ(treeDepth(3), 2);
  EXPECT_EQ(treeDepth(4), 3);
  EXPECT_EQ(treeDepth(7), 3);
  EXPECT_EQ(treeDepth(8), 4);
  EXPECT_EQ(treeDepth(16), 5);
}

INSTANTIATE_TEST_SUITE_P(Ranks1To16, TreeScheduleTest, ::testing::Range(1, 17),
                         [](const ::testing::TestParamInfo<int>& param) {
                           return "n" + std::to_string(param.param);
                         });

}  // namespace
}  // namespace mcl::schedules
