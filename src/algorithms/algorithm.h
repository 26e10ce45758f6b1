// The names of algorithms and of the collectives that have a choice of
// them: what the algorithm table, the tuner and the communicator's context
// share.
#pragma once

#include <array>
#include <cstddef>

namespace mcl {

enum class Algorithm {
  Auto,
  Ring,
  Tree,
  Direct,
  HalvingDoubling,
  Chain,
};

// The collectives that have a choice of algorithms, as MCL_ALGO names them.
enum class Collective {
  AllReduce,
  AllGather,
  Broadcast,
  Reduce,
  ReduceScatter,
  AllToAll,
};
constexpr size_t kCollectiveCount = 6;

// The algorithm forced for each collective, Auto where none is.
using ForcedAlgorithms = std::array<Algorithm, kCollectiveCount>;

}  // namespace mcl
