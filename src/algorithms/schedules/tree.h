// Binary trees over ranks, as pure functions. A tree is laid out like a
// heap over positions 0..n-1 (position 0 the root; p's children 2p+1 and
// 2p+2), and placed on ranks by rotation or mirroring:
//  - rooted trees (broadcast, reduce): position = (rank - root) mod n;
//  - the two trees of the double binary tree all-reduce: tree 0 puts rank r
//    at position r, tree 1 at position n-1-r. A heap's leaves are its upper
//    half of positions, so the ranks that are leaves in one tree are inner
//    nodes of the other: every rank forwards data in only one tree, and
//    each tree carries half the buffer.
#pragma once

#include <array>

namespace mcl::schedules {

struct TreeLinks {
  int parent = -1;                      // -1 at the root
  std::array<int, 2> children{-1, -1};  // -1 where there is none
  int childCount() const {
    return (children[0] >= 0 ? 1 : 0) + (children[1] >= 0 ? 1 : 0);
  }
};

// The tree rooted at `root`, for broadcast and reduce.
TreeLinks rootedTree(int nranks, int root, int rank);

// Tree 0 or 1 of the double binary tree.
TreeLinks doubleTree(int nranks, int tree, int rank);

// Levels of a heap of n nodes: 1 for one node, 2 for two or three, ...
int treeDepth(int nranks);

}  // namespace mcl::schedules
