// Checks of every operation's arguments, before anything moves: each bad
// argument is an mclInvalidArgument naming it, and the communicator stays
// usable.
#pragma once

#include "algorithms/op.h"
#include "core/comm/comm.h"

namespace mcl {

// Throws Error(mclInvalidArgument, ...) naming the argument.
void validateOp(const mclComm& comm, const OpArgs& op);

}  // namespace mcl
