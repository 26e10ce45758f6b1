#include "transports/shm/shm_segments.h"

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <algorithm>
#include <new>
#include <system_error>

#include "base/byte_text.h"
#include "base/error.h"
#include "base/log.h"
#include "base/segment_names.h"
#include "platform/host_identity.h"
#include "platform/wait_on_address.h"
#include "transports/shm/shm_connection.h"

namespace mcl::transport::shm {

namespace {

class ShmWaker final : public Waker {
 public:
  explicit ShmWaker(SegmentHeader* header) : header_(header) {}

  uint32_t arm() override {
    uint32_t token = header_->doorbell.load(std::memory_order_relaxed);
    header_->sleeping.store(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return token;
  }
  void sleep(uint32_t token, int64_t timeoutNs) override {
    platform::waitOnAddress(&header_->doorbell, token, timeoutNs);
  }
  void disarm() override {
    header_->sleeping.store(0, std::memory_order_relaxed);
  }
  void interrupt() override {
    header_->doorbell.fetch_add(1, std::memory_order_seq_cst);
    platform::wakeAddress(&header_->doorbell);
  }

 private:
  SegmentHeader* header_;
};

}  // namespace

bool segmentLayoutValid(const void* segment, size_t bytes, uint32_t rings) {
  if (bytes < sizeof(SegmentHeader)) return false;
  const auto* header = static_cast<const SegmentHeader*>(segment);
  if (header->magic != kSegmentMagic || header->rings != rings ||
      header->slots == 0 || header->slotBytes == 0 ||
      header->slotBytes % 64 != 0 ||
      header->ringStride != ringBytes(header->slots, header->slotBytes))
    return false;
  // Divided rather than multiplied out: rings * ringStride can wrap around
  // 64 bits (2^30 slots of 4 GiB) and make a tiny segment look big enough.
  return (bytes - sizeof(SegmentHeader)) / header->ringStride >= header->rings;
}

ShmSegments::ShmSegments(int rank, std::vector<int> localRanks,
                         RingMemory memory, const ShmOptions& options)
    : rank_(rank),
      localRanks_(std::move(localRanks)),
      ringStores_(options.ringStores),
      peers_(localRanks_.size()) {
  auto rings = static_cast<uint32_t>(localRanks_.size()) * kChannels;
  size_t bytes = segmentBytes(rings, options.slots, options.slotBytes);
  // Pages taken now and mapped at once (here and by the peers): left to
  // first touch, the faults fall on the first calls (a 1 MiB all-gather
  // measured 80-93 us instead of 48 in one run of three), and a page the
  // tmpfs cannot supply then is a SIGBUS. The device sized the rings to fit
  // (ring_fit.h); another process may still have taken the room since.
  try {
    if (memory == RingMemory::Private) {
      own_ = platform::SharedMemory::createPrivate(bytes);
    } else {
      NamedSegment made = createNamedSegment(SegmentKind::Rings, bytes, true);
      own_ = std::move(made.memory);
      segmentName_ = std::move(made.name);
    }
  } catch (const std::system_error& e) {
    if (e.code().value() != ENOSPC)
      throw error(mclSystemError,
                  "rank %d: cannot create its shared-memory segment of %s: %s",
                  rank, bytesText(bytes).c_str(), e.what());
    const platform::SharedMemoryRoom room = platform::sharedMemoryRoom();
    std::string free = room.known ? bytesText(room.freeBytes) + " free in " +
                                        room.where + " now"
                                  : "";
    throw error(mclSystemError,
                "rank %d: cannot reserve its shared-memory segment of %s "
                "(%s): %s. Another process took the room since init began, "
                "or /dev/shm is too small: make it larger (docker run "
                "--shm-size), run fewer ranks per host, or set "
                "MCL_TRANSPORT=tcp",
                rank, bytesText(bytes).c_str(),
                free.empty() ? "room unknown" : free.c_str(), e.what());
  }
  ownHeader_ = new (own_.data()) SegmentHeader{};
  ownHeader_->magic = kSegmentMagic;
  ownHeader_->rings = rings;
  ownHeader_->slots = options.slots;
  ownHeader_->slotBytes = options.slotBytes;
  ownHeader_->ownerPid = static_cast<uint32_t>(getpid());
  ownHeader_->ownerPidNamespace = platform::pidNamespace();
  ownHeader_->ringStride = ringBytes(options.slots, options.slotBytes);
  ownHeader_->pagesReserved = 1;
  for (uint32_t i = 0; i < rings; ++i) {
    RingView ring = ringInSegment(ownHeader_, i);
    new (ring.control) RingControl{};
  }
  waker_ = std::make_unique<ShmWaker>(ownHeader_);
  MCL_LOG(Info, kLogShm, "rank %d: shm segment %s, %u rings of %u x %u bytes",
          rank, segmentName_.c_str(), rings, options.slots, options.slotBytes);
}

ShmSegments::~ShmSegments() {
  if (!unlinked_ && !segmentName_.empty())
    platform::SharedMemory::unlink(segmentName_);
  // A peer that died between creating its segment and unlinking it would
  // leave the name behind; whoever knows the name removes it.
  for (const auto& name : peerNames_) platform::SharedMemory::unlink(name);
}

bool ringSegmentAbandoned(const std::string& name, int* ownerPid) {
  SegmentCreator creator;
  if (!segmentCreator(name, SegmentKind::Rings, &creator) ||
      !creator.inThisPidNamespace)
    return false;
  platform::SharedMemory segment;
  try {
    segment = platform::SharedMemory::open(name);
  } catch (const std::exception&) {
    return false;  // gone already, or not ours to open
  }
  if (segment.size() < sizeof(SegmentHeader)) return false;
  const auto* header = static_cast<const SegmentHeader*>(segment.data());
  // A header half written (by an init under way) has no magic yet, or no
  // owner: left alone.
  if (header->magic != kSegmentMagic || header->ownerPid == 0 ||
      header->ownerPidNamespace != platform::pidNamespace())
    return false;
  *ownerPid = static_cast<int>(header->ownerPid);
  return !platform::processAlive(*ownerPid);
}

int ShmSegments::localIndex(int rank) const {
  auto it = std::lower_bound(localRanks_.begin(), localRanks_.end(), rank);
  if (it == localRanks_.end() || *it != rank)
    throw error(mclInternalError, "rank %d is not local to rank %d", rank,
                rank_);
  return static_cast<int>(it - localRanks_.begin());
}

void ShmSegments::mapPeer(int peerRank, const std::string& peerSegment,
                          int peerPid) {
  Peer& peer = peers_[static_cast<size_t>(localIndex(peerRank))];
  peer.pid = peerPid;
  if (peerRank != rank_) peerNames_.push_back(peerSegment);
  if (peerRank == rank_) {
    peer.header = ownHeader_;
    return;
  }
  try {
    peer.segment = platform::SharedMemory::open(peerSegment);
  } catch (const std::exception& e) {
    throw error(mclSystemError,
                "rank %d: cannot map rank %d's shared-memory segment %s: %s",
                rank_, peerRank, peerSegment.c_str(), e.what());
  }
  auto* header = static_cast<SegmentHeader*>(peer.segment.data());
  if (!segmentLayoutValid(
          peer.segment.data(), peer.segment.size(),
          static_cast<uint32_t>(localRanks_.size()) * kChannels))
    throw error(mclRemoteError,
                "rank %d: rank %d's shared-memory segment %s has an "
                "unexpected layout (mixed mcl versions?)",
                rank_, peerRank, peerSegment.c_str());
  // Its pages exist: map them now rather than at the first calls.
  if (header->pagesReserved != 0) peer.segment.populate();
  peer.header = header;
}

void ShmSegments::unlinkOwnSegment() {
  if (!segmentName_.empty()) platform::SharedMemory::unlink(segmentName_);
  unlinked_ = true;
}

std::unique_ptr<Connection> ShmSegments::connect(int peerRank,
                                                 Channel channel) {
  int peerIndex = localIndex(peerRank);
  const auto base = static_cast<uint32_t>(localRanks_.size()) * channel;
  Peer& peer = peers_[static_cast<size_t>(peerIndex)];
  if (peer.header == nullptr)
    throw error(mclInternalError, "rank %d: rank %d's segment is not mapped",
                rank_, peerRank);
  auto myIndex = static_cast<uint32_t>(localIndex(rank_));
  RingView outbound = ringInSegment(peer.header, base + myIndex);
  RingView inbound =
      ringInSegment(ownHeader_, base + static_cast<uint32_t>(peerIndex));
  return std::make_unique<ShmConnection>(peerRank, peer.pid, outbound,
                                         peer.header, inbound, ringStores_);
}

}  // namespace mcl::transport::shm
