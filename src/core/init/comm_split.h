// mclCommSplit: ranks of a communicator that pass the same color form a new
// one, ordered by key (ties by their rank in the parent). The ranks agree
// through two all-gathers on the parent: first colors and keys, then the
// unique id the first rank of each color made.
#pragma once

#include <mcl/mcl.h>

#include <exception>
#include <memory>

#include "core/comm/comm.h"
#include "core/params/settings.h"

namespace mcl {

// The new communicator's settings: config's, or with a null config the
// parent's timeout, transport, name, algorithms and blocking; or why
// config is wrong, thrown by splitComm once the ranks have agreed (the
// parent's exchanges must not wait on a rank that stopped).
struct SplitSettings {
  CommSettings settings;
  std::exception_ptr error;
};
SplitSettings splitSettings(const mclComm& parent, const mclConfig_t* config);

// Collective over `parent`. Returns null for MCL_SPLIT_NOCOLOR.
std::unique_ptr<mclComm> splitComm(mclComm& parent, int color, int key,
                                   const SplitSettings& settings);

}  // namespace mcl
