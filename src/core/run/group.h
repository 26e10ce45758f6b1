// Groups: between mclGroupStart and the outermost mclGroupEnd, operations
// are collected per thread and then run together, so a rank can send to and
// receive from a peer without the two waiting on each other.
#pragma once

#include "core/comm/pending_init.h"
#include "core/run/execute.h"

#include <functional>
#include <memory>
#include <string>

namespace mcl {

bool inGroup();
void groupStart();
// Runs or queues the collected operations, and starts the group's inits
// (each on a thread of its own), then waits for its blocking ones. Throws
// mclInvalidUsage without a matching start, or when an operation in the
// group was rejected; an init's error when one failed. mclInProgress when
// a non-blocking init of the group is still under way, else mclSuccess.
mclResult_t groupEnd();

// An init or split called inside the open group: it starts at the
// outermost mclGroupEnd. undo runs when the group fails before it starts.
void groupDefer(std::shared_ptr<PendingInit> init,
                std::function<void()> undo = {});

// Routes one validated operation: into the open group, onto the stream, or
// executed now (stream == NULL).
void submit(mclComm_t handle, mclComm* comm, const OpArgs& op,
            mclStream_t stream);

// A call inside a group was rejected: the group will not run.
void groupPoison(mclResult_t code, const std::string& message);

}  // namespace mcl
