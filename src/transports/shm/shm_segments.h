// The shared memory of one rank in one communicator (what ShmDevice
// builds on): its segment
// (doorbell + inbound rings), the mapped segments of the other local ranks,
// and the connections and waker built on them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "platform/shared_memory.h"
#include "transports/shm/shm_layout.h"
#include "transports/shm/shm_options.h"
#include "transports/shm/store_choice.h"
#include "transports/transport.h"

namespace mcl::transport::shm {

// Whether `bytes` of a peer's mapped segment hold the layout this build
// makes, with `rings` rings that all fit: what a peer wrote there is outside
// input (another mcl version, or damage), checked before any ring is used.
bool segmentLayoutValid(const void* segment, size_t bytes, uint32_t rings);

// For init's sweep of /dev/shm: whether `name` is a ring segment (by its
// name, then its header) of this layout whose owner (*ownerPid) is gone, as
// seen from this pid namespace. Segments of other namespaces, and ones an
// init is still writing, are not.
bool ringSegmentAbandoned(const std::string& name, int* ownerPid);

// Where a rank keeps its rings: in private memory when it is its only local
// rank, else in a segment under a new random name that its peers map.
enum class RingMemory { Private, Shared };

class ShmSegments {
 public:
  // localRanks: the communicator ranks on this host, ascending, including
  // `rank`. Throws mclSystemError when /dev/shm has no room for the
  // segment, or no name could be had for it.
  ShmSegments(int rank, std::vector<int> localRanks, RingMemory memory,
              const ShmOptions& options);
  ~ShmSegments();

  // What the peers open (empty for private memory): sent to them in the
  // init exchange, the only way they learn it.
  const std::string& segmentName() const { return segmentName_; }

  // Maps a local peer's segment (after it was created, before it is
  // unlinked).
  void mapPeer(int peerRank, const std::string& peerSegment, int peerPid);
  // Removes our segment's name once every peer has mapped it.
  void unlinkOwnSegment();

  std::unique_ptr<Connection> connect(int peerRank, Channel channel);
  Waker& waker() { return *waker_; }

 private:
  int localIndex(int rank) const;

  int rank_;
  std::vector<int> localRanks_;
  std::string segmentName_;
  RingStores ringStores_;
  std::vector<std::string> peerNames_;
  bool unlinked_ = false;
  platform::SharedMemory own_;
  SegmentHeader* ownHeader_ = nullptr;
  struct Peer {
    platform::SharedMemory segment;
    SegmentHeader* header = nullptr;
    int pid = 0;
  };
  std::vector<Peer> peers_;  // by local index
  std::unique_ptr<Waker> waker_;
};

}  // namespace mcl::transport::shm
