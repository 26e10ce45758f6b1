// Runs a batch of operations (one call, or a whole group) to completion on
// the calling thread: point-to-point first, every send and receive at once,
// then each communicator's collectives in call order. A failure marks the
// communicators involved as failed (sticky) and is rethrown.
#pragma once

#include <vector>

#include "algorithms/op.h"
#include "core/comm.h"

namespace mcl {

struct PendingOp {
  mclComm* comm = nullptr;
  OpArgs args;
};

// The caller holds a CommRef (or a queued-op count) for every comm.
void executeOps(std::vector<PendingOp>& ops);

// The common case, without building a vector.
void executeOne(mclComm& comm, const OpArgs& op);

}  // namespace mcl
