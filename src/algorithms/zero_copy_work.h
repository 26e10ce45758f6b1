// The work of one rank in a zero-copy collective: every rank's buffers are
// mapped into this process, and each rank does its share in place. Shares
// never overlap, so the ranks run at once without locks; the caller syncs
// before (every buffer is ready) and after (nobody still reads or writes).
//  - all-reduce: rank r reduces slice r of every input, in rank order, and
//    writes it into every rank's output;
//  - reduce: the same, written into the root's output only;
//  - reduce-scatter: rank r reduces block r of every input into its output;
//  - all-gather: rank r copies every rank's input into its output;
//  - broadcast: rank r copies the root's input into its output;
//  - all-to-all: rank r copies block r of every input into its output.
// Pure computation: unit-tested with every "rank" in one process.
#pragma once

#include <cstddef>
#include <vector>

#include "algorithms/op.h"

namespace mcl {

struct InPlaceView {
  int rank = 0;
  int nranks = 1;
  // Every rank's buffers as this process sees them; null where the call
  // does not need them (see zeroCopyNeeds).
  std::vector<const std::byte*> send;
  std::vector<std::byte*> recv;
};

// Which ranks' buffers a rank's share reads or writes.
struct ZeroCopyNeeds {
  bool everySend = false;  // else the root's only (broadcast)
  bool everyRecv = false;
  bool rootRecv = false;
};
ZeroCopyNeeds zeroCopyNeeds(Collective kind);

// Bytes of this rank's send and receive buffers in op.
size_t sendBytes(const OpArgs& op, int nranks);
size_t recvBytes(const OpArgs& op, int nranks);

// Runs rank view.rank's share of op. Large calls write past the caches.
void runZeroCopyShare(const OpArgs& op, const InPlaceView& view);

}  // namespace mcl
