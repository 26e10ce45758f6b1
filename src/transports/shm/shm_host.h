// What shared memory asks of a host beyond one communicator: the room its
// rings take there, for the topology's check of /dev/shm. Core reaches it
// through the transport's registry entry (core/registry/) alone.
#pragma once

#include <cstdint>

#include "base/param_source.h"

namespace mcl::transport::shm {

// The bytes of /dev/shm that `localRanks` ranks of one host take for their
// rings under `params` (MCL_SHM_*), each segment in whole pages.
uint64_t hostSharedBytes(int localRanks, const ParamSource& params);

}  // namespace mcl::transport::shm
