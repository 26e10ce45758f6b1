// What a communicator's transports hold for their peers: the rings of
// shared memory, the TCP pieces, the RDMA frames, and the staging copies
// some operations make. Bounded per peer and transport (MCL_PEER_BUFFER_LIMIT,
// 8 MiB by default), so a cluster of many ranks cannot eat a Mac's memory
// through settings nobody looked at; reported in the topology JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transports/device.h"

struct mclComm;

namespace mcl {

struct TransportMemory {
  std::string transport;  // the device's name
  uint64_t bytes = 0;     // this process holds for all its peers
  uint64_t perPeer = 0;   // the most any one peer takes
};

struct MemoryFootprint {
  // Every registered transport, in priority order (0 for those unused).
  std::vector<TransportMemory> transports;
  uint64_t limitPerPeer = 0;  // MCL_PEER_BUFFER_LIMIT
};

// Throws mclInvalidUsage, naming the transport, its settings and the
// limit, when `device` would hold more than comm.peerBufferLimit
// (MCL_PEER_BUFFER_LIMIT, read at init) for one peer. Before the device is
// connected its wires are not known: one is assumed.
void checkPeerBufferLimit(const mclComm& comm, const transport::Device& device);

// From the transports as they were built.
MemoryFootprint memoryFootprint(const mclComm& comm);

}  // namespace mcl
