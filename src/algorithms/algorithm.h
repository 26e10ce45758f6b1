// The names of algorithms, and which one MCL_ALGO forces for each
// collective that has a choice of them (base/collective.h): what the
// algorithm table, the tuner and the communicator's context share.
#pragma once

#include <array>
#include <cstddef>

#include "base/collective.h"

namespace mcl {

enum class Algorithm {
  Auto,
  Ring,
  Tree,
  Direct,
  HalvingDoubling,
  Chain,
};

// The algorithm forced for each collective, Auto where none is.
using ForcedAlgorithms = std::array<Algorithm, kTunedCollectives>;

}  // namespace mcl
