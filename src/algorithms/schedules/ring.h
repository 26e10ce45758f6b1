// Peer math of ring and chain schedules, as pure functions: which block of
// the buffer each rank sends and receives at each step. Execution lives in
// the algorithm files; these are unit-tested alone.
//
// Ring order is rank order: rank r sends to r+1 and receives from r-1.
// Reduce-scatter takes n-1 steps; at step s rank r sends block (r-s-1) and
// receives block (r-s-2), so the block it receives last is its own, r.
// All-gather then circulates each rank's block: at step s rank r sends
// block (r-s) and receives block (r-s-1).
#pragma once

#include <cstddef>

namespace mcl::schedules {

struct Block {
  size_t offset = 0;  // in elements
  size_t count = 0;
};

inline int ringNext(int nranks, int rank) { return (rank + 1) % nranks; }
inline int ringPrev(int nranks, int rank) {
  return (rank + nranks - 1) % nranks;
}
inline int wrap(int nranks, int index) {
  return ((index % nranks) + nranks) % nranks;
}

// Block `index` of `count` elements split into nranks nearly equal,
// contiguous blocks (the first count % nranks blocks get one more).
Block evenBlock(size_t count, int nranks, int index);

struct RingStep {
  int sendBlock;
  int recvBlock;
};

// step in [0, nranks-2].
RingStep ringReduceScatterStep(int nranks, int rank, int step);
RingStep ringAllGatherStep(int nranks, int rank, int step);

// A rank's place in a chain: prev receives from, next sends to (-1: none).
struct ChainLink {
  int prev = -1;
  int next = -1;
};

// Broadcast chain root -> root+1 -> ... -> root-1.
ChainLink broadcastChain(int nranks, int root, int rank);
// Reduce chain root+1 -> root+2 -> ... -> root (ends at the root).
ChainLink reduceChain(int nranks, int root, int rank);

}  // namespace mcl::schedules
