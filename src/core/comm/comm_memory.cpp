#include "core/comm/comm_memory.h"

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "core/comm/comm.h"
#include "core/registry/transport_registry.h"

namespace mcl {

void checkPeerBufferLimit(const mclComm& comm,
                          const transport::Device& device) {
  const transport::BufferUse use = device.bufferUse();
  const uint64_t bytes =
      use.bytesPerWire * static_cast<uint64_t>(use.mostWiresToOnePeer);
  if (bytes > comm.peerBufferLimit)
    throw error(
        mclInvalidUsage,
        "%s: the %s transport would hold %llu bytes per peer (%s), over "
        "MCL_PEER_BUFFER_LIMIT=%llu: lower those settings or raise "
        "the limit",
        comm.label().c_str(), device.name(),
        static_cast<unsigned long long>(bytes), use.settings,
        static_cast<unsigned long long>(comm.peerBufferLimit));
}

MemoryFootprint memoryFootprint(const mclComm& comm) {
  MemoryFootprint m;
  m.limitPerPeer = comm.peerBufferLimit;
  for (const TransportEntry& entry : transportRegistry()) {
    TransportMemory t;
    t.transport = entry.name;
    for (size_t d = 0; d < comm.devices.size(); ++d) {
      if (comm.devices[d]->name() != t.transport) continue;
      // A standby (TCP beside RDMA) holds its buffers though idle.
      if (!comm.transports.joinsSomePair(int(d)) &&
          !comm.transports.standsBy(int(d)))
        continue;
      const transport::BufferUse use = comm.devices[d]->bufferUse();
      if (use.wires == 0) continue;
      t.perPeer =
          use.bytesPerWire * static_cast<uint64_t>(use.mostWiresToOnePeer);
      t.bytes = use.bytesPerWire * static_cast<uint64_t>(use.wires);
    }
    m.transports.push_back(t);
  }
  return m;
}

}  // namespace mcl
