#include "algorithms/schedules/ring.h"

#include <cstddef>

namespace mcl::schedules {

Block evenBlock(size_t count, int nranks, int index) {
  auto n = static_cast<size_t>(nranks);
  auto i = static_cast<size_t>(index);
  size_t base = count / n;
  size_t extra = count % n;
  Block b;
  b.count = base + (i < extra ? 1 : 0);
  b.offset = i * base + (i < extra ? i : extra);
  return b;
}

RingStep ringReduceScatterStep(int nranks, int rank, int step) {
  return {wrap(nranks, rank - step - 1), wrap(nranks, rank - step - 2)};
}

RingStep ringAllGatherStep(int nranks, int rank, int step) {
  return {wrap(nranks, rank - step), wrap(nranks, rank - step - 1)};
}

ChainLink broadcastChain(int nranks, int root, int rank) {
  ChainLink link;
  int position = wrap(nranks, rank - root);  // root is 0
  if (position > 0) link.prev = ringPrev(nranks, rank);
  if (position < nranks - 1) link.next = ringNext(nranks, rank);
  return link;
}

ChainLink reduceChain(int nranks, int root, int rank) {
  ChainLink link;
  int position = wrap(nranks, rank - root - 1);  // root is nranks-1
  if (position > 0) link.prev = ringPrev(nranks, rank);
  if (position < nranks - 1) link.next = ringNext(nranks, rank);
  return link;
}

}  // namespace mcl::schedules
