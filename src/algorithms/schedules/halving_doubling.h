// Recursive halving and doubling for any number of ranks, as pure functions.
// Let p be the largest power of two <= n. The first 2(n-p) ranks pair up
// (2i with 2i+1): the even one folds its whole input into its partner first
// and gets the result back at the end; the other p ranks are "active",
// numbered 0..p-1. The buffer is cut into p even blocks. Reduce-scatter by
// halving: at step k an active rank exchanges with the one whose number
// differs in bit (p/2 >> k), sending the half of its current range the
// partner keeps and reducing the half it keeps; after log2(p) steps active
// rank i holds block i, fully reduced. All-gather by doubling runs the steps
// backwards, sending what it holds and receiving what the partner holds.
#pragma once

#include <vector>

namespace mcl::schedules {

struct HalvingDoublingRole {
  int activeCount = 1;   // p
  int index = -1;        // 0..p-1 when active, else -1
  int foldPartner = -1;  // the pair partner of the first 2(n-p) ranks
};

HalvingDoublingRole halvingDoublingRole(int nranks, int rank);

// The rank of active number `index`.
int activeRank(int nranks, int index);

// One exchange of the reduce-scatter, in blocks [lo, hi) of p.
struct HalvingStep {
  int peer = -1;  // a rank
  int sendLo = 0, sendHi = 0;
  int keepLo = 0, keepHi = 0;
};

// The reduce-scatter steps of an active rank (none for folded ranks). The
// all-gather is the same steps reversed, with send and keep swapped.
std::vector<HalvingStep> halvingSteps(int nranks, int rank);

}  // namespace mcl::schedules
