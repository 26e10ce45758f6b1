#include "algorithms/schedules/tree.h"

#include <cstddef>

#include "algorithms/schedules/ring.h"

namespace mcl::schedules {

namespace {

// The heap links of `position`, mapped to ranks by `rankAt`.
template <class RankAt>
TreeLinks heapLinks(int nranks, int position, RankAt rankAt) {
  TreeLinks t;
  if (position > 0) t.parent = rankAt((position - 1) / 2);
  for (int k = 0; k < 2; ++k) {
    int child = 2 * position + 1 + k;
    if (child < nranks) t.children[size_t(k)] = rankAt(child);
  }
  return t;
}

}  // namespace

TreeLinks rootedTree(int nranks, int root, int rank) {
  return heapLinks(nranks, wrap(nranks, rank - root),
                   [&](int p) { return wrap(nranks, p + root); });
}

TreeLinks doubleTree(int nranks, int tree, int rank) {
  if (tree == 0) return heapLinks(nranks, rank, [](int p) { return p; });
  return heapLinks(nranks, nranks - 1 - rank,
                   [&](int p) { return nranks - 1 - p; });
}

int treeDepth(int nranks) {
  int depth = 0;
  for (int width = 1, covered = 0; covered < nranks; width *= 2) {
    covered += width;
    ++depth;
  }
  return depth;
}

}  // namespace mcl::schedules
