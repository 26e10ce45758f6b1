#include "transports/shm/shm_host.h"

#include <cstdint>

#include "transports/shm/ring_fit.h"
#include "transports/shm/shm_options.h"

namespace mcl::transport::shm {

uint64_t hostSharedBytes(int localRanks, const ParamSource& params) {
  const ShmOptions rings = loadShmOptions(params);
  const auto n = static_cast<uint32_t>(localRanks);
  return n * segmentPagesBytes(n, rings.slots, rings.slotBytes);
}

}  // namespace mcl::transport::shm
