// What a communicator's transports hold for their peers: the rings of
// shared memory, the TCP pieces, the RDMA frames, and the staging copies
// some operations make. Bounded per peer and transport (MCL_PEER_BUFFER_LIMIT,
// 8 MiB by default), so a cluster of many ranks cannot eat a Mac's memory
// through settings nobody looked at; reported in the topology JSON.
#pragma once

#include <cstdint>

struct mclComm;

namespace mcl {

struct MemoryFootprint {
  // Bytes this process holds for all its peers, per transport.
  uint64_t shmBytes = 0;
  uint64_t tcpBytes = 0;
  uint64_t rdmaBytes = 0;
  // The most any one peer takes, per transport.
  uint64_t shmPerPeer = 0;
  uint64_t tcpPerPeer = 0;
  uint64_t rdmaPerPeer = 0;
  uint64_t limitPerPeer = 0;  // MCL_PEER_BUFFER_LIMIT
};

// Per peer, from the settings: what each transport allocates for one.
uint64_t shmBytesPerPeer(const mclComm& comm);
uint64_t tcpBytesPerPeer(const mclComm& comm);
uint64_t rdmaBytesPerCable(const mclComm& comm);

// Throws mclInvalidUsage, naming the transport, its settings and the
// limit, when the buffers for one peer would pass comm.peerBufferLimit
// (MCL_PEER_BUFFER_LIMIT, read at init).
// Which transports serve some peer; cablesToOnePeer: the most RDMA cables
// to one peer (0 without RDMA).
void checkPeerBufferLimit(const mclComm& comm, bool shm, bool tcp,
                          int cablesToOnePeer);

// From the transports as they were built.
MemoryFootprint memoryFootprint(const mclComm& comm);

}  // namespace mcl
