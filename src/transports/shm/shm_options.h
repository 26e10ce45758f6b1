// The shared-memory transport's settings (MCL_SHM_*), and its rows of the
// parameter registry.
#pragma once

#include <cstdint>

#include "base/param_source.h"
#include "transports/shm/store_choice.h"

namespace mcl::transport::shm {

struct ShmOptions {
  uint32_t slots = 8;
  uint32_t slotBytes = 64 * 1024;
  RingStores ringStores = RingStores::Auto;
};

// Throws mclInvalidArgument naming the variable.
ShmOptions loadShmOptions(const ParamSource& params);

ParamTable shmParams();

}  // namespace mcl::transport::shm
