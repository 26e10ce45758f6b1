#include "core/comm_memory.h"

#include <cstdint>

#include "base/error.h"
#include "core/comm.h"
#include "transports/shm/shm_layout.h"

namespace mcl {

uint64_t shmBytesPerPeer(const mclComm& comm) {
  // A ring per channel from the peer into this rank's segment.
  const auto& s = comm.settings.shm;
  return uint64_t{transport::shm::kChannels} * s.slots * s.slotBytes;
}

uint64_t tcpBytesPerPeer(const mclComm& comm) {
  // A connection per channel, each with its pieces both ways.
  const auto& s = comm.settings.tcp.slots;
  return uint64_t{transport::tcp::kTcpChannels} * 2 * s.slots * s.slotBytes;
}

uint64_t rdmaBytesPerCable(const mclComm& comm) {
  // A queue pair per channel on each cable, with its frames both ways.
  const auto& s = comm.settings.rdma.shape;
  return uint64_t{transport::rdma::kRdmaChannels} * 2 *
         static_cast<uint64_t>(s.depth) * s.frameBytes;
}

void checkPeerBufferLimit(const mclComm& comm, bool shm, bool tcp,
                          int cablesToOnePeer) {
  const uint64_t limit = comm.peerBufferLimit;
  struct Use {
    const char* transport;
    uint64_t bytes;
    const char* settings;
  };
  const Use uses[] = {
      {"shared memory", shm ? shmBytesPerPeer(comm) : 0,
       "MCL_SHM_SLOTS x MCL_SHM_SLOT_BYTES"},
      {"TCP", tcp ? tcpBytesPerPeer(comm) : 0,
       "MCL_TCP_SLOTS x MCL_TCP_SLOT_BYTES"},
      {"RDMA", rdmaBytesPerCable(comm) * static_cast<uint64_t>(cablesToOnePeer),
       "MCL_RDMA_DEPTH x MCL_RDMA_FRAME_BYTES, per cable"},
  };
  for (const Use& u : uses)
    if (u.bytes > limit)
      throw error(mclInvalidUsage,
                  "%s: %s would hold %llu bytes per peer (%s), over "
                  "MCL_PEER_BUFFER_LIMIT=%llu: lower those settings or raise "
                  "the limit",
                  comm.label().c_str(), u.transport,
                  static_cast<unsigned long long>(u.bytes), u.settings,
                  static_cast<unsigned long long>(limit));
}

MemoryFootprint memoryFootprint(const mclComm& comm) {
  MemoryFootprint m;
  m.limitPerPeer = comm.peerBufferLimit;
  if (comm.shm && comm.shmPeers > 0) {
    m.shmPerPeer = shmBytesPerPeer(comm);
    m.shmBytes = m.shmPerPeer * static_cast<uint64_t>(comm.shmPeers);
  }
  if (comm.tcp && comm.tcpPeers > 0) {
    m.tcpPerPeer = tcpBytesPerPeer(comm);
    m.tcpBytes = m.tcpPerPeer * static_cast<uint64_t>(comm.tcpPeers);
  }
  if (comm.rdma) {
    m.rdmaPerPeer = rdmaBytesPerCable(comm) *
                    static_cast<uint64_t>(comm.rdma->mostCablesToOnePeer());
    m.rdmaBytes = rdmaBytesPerCable(comm) *
                  static_cast<uint64_t>(comm.rdma->cableCount());
  }
  return m;
}

}  // namespace mcl
