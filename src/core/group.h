// Groups: between mclGroupStart and the outermost mclGroupEnd, operations
// are collected per thread and then run together, so a rank can send to and
// receive from a peer without the two waiting on each other.
#pragma once

#include "core/execute.h"

#include <string>

namespace mcl {

bool inGroup();
void groupStart();
// Runs or queues the collected operations. Throws mclInvalidUsage without a
// matching start, or when an operation in the group was rejected.
void groupEnd();

// Routes one validated operation: into the open group, onto the stream, or
// executed now (stream == NULL).
void submit(mclComm_t handle, mclComm* comm, const OpArgs& op,
            mclStream_t stream);

// A call inside a group was rejected: the group will not run.
void groupPoison(mclResult_t code, const std::string& message);

}  // namespace mcl
