#include "transports/shm/shm_options.h"

#include <cstdint>

#include "base/error.h"

namespace mcl::transport::shm {

namespace {

constexpr ParamDef kParams[] = {
    {"MCL_SHM_SLOT_BYTES", "65536",
     "Size of one slot of a shared-memory ring, in bytes (a multiple of 64): "
     "the pipelining chunk of large transfers."},
    {"MCL_SHM_RING_STORES", "auto",
     "How a rank writes pieces of 16 KiB and more into a shared-memory "
     "ring (x86-64): auto (plain or non-temporal stores, whichever its "
     "recent writes found cheaper, non-temporal only when at least twice "
     "as cheap: it depends on how far apart the two cores are), plain or "
     "stream."},
    {"MCL_SHM_SLOTS", "8",
     "Slots per shared-memory ring, one ring per ordered pair of local "
     "ranks."},
};

}  // namespace

ParamTable shmParams() { return kParams; }

ShmOptions loadShmOptions(const ParamSource& params) {
  ShmOptions o;
  o.slotBytes =
      static_cast<uint32_t>(params.integer("MCL_SHM_SLOT_BYTES", 64, 64 << 20));
  if (o.slotBytes % 64 != 0)
    throw error(mclInvalidArgument,
                "MCL_SHM_SLOT_BYTES=%u is not a multiple of 64", o.slotBytes);
  o.slots = static_cast<uint32_t>(params.integer("MCL_SHM_SLOTS", 2, 4096));
  o.ringStores = ringStoresNamed(params.text("MCL_SHM_RING_STORES"));
  return o;
}

}  // namespace mcl::transport::shm
