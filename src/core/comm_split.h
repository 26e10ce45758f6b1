// mclCommSplit: ranks of a communicator that pass the same color form a new
// one, ordered by key (ties by their rank in the parent). The ranks agree
// through two all-gathers on the parent: first colors and keys, then the
// unique id the first rank of each color made.
#pragma once

#include <mcl/mcl.h>

#include <memory>

#include "core/comm.h"

namespace mcl {

// Collective over `parent`. Returns null for MCL_SPLIT_NOCOLOR. A null
// config inherits the parent's timeout, transport, name and algorithms.
std::unique_ptr<mclComm> splitComm(mclComm& parent, int color, int key,
                                   const mclConfig_t* config);

}  // namespace mcl
