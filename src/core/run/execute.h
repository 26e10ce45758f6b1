// Runs a batch of operations (one call, or a whole group) to completion on
// the calling thread. Operations on a communicator run in the order the API
// accepted them, whichever thread or stream runs them: each batch takes a
// ticket per communicator when it is issued and waits for its turn. Within a
// batch, every operation progresses at once (point-to-point has its own
// connections, so it never mixes with collectives); each communicator's
// collectives run in call order. A failure marks the communicators involved
// as failed (sticky) and is rethrown.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "algorithms/op.h"
#include "core/comm/comm.h"

namespace mcl {

struct PendingOp {
  mclComm* comm = nullptr;
  OpArgs args;
};

struct Batch {
  std::vector<PendingOp> ops;
  std::vector<std::pair<mclComm*, uint64_t>> tickets;  // one per comm
};

// Takes the batch's tickets (atomically across its communicators).
void issue(Batch& batch);

// Waits for the batch's turn on every communicator, runs it, and passes the
// turn on, also when it fails. The caller keeps every comm alive.
void execute(Batch& batch);

// One operation on the caller's thread, issued and run at once: the path of
// every blocking call, without a batch to allocate.
void executeNow(mclComm& comm, const OpArgs& op);

}  // namespace mcl
