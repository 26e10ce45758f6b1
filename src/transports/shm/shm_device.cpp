#include "transports/shm/shm_device.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/byte_text.h"
#include "base/error.h"
#include "base/log.h"
#include "base/wire.h"
#include "platform/shared_memory.h"
#include "transports/shm/ring_fit.h"

namespace mcl::transport::shm {

namespace {

// "free of total (df -h /dev/shm)": free as every rank saw it when they met.
std::string roomText(uint64_t freeBytes) {
  const platform::SharedMemoryRoom room = platform::sharedMemoryRoom();
  return bytesText(freeBytes) + " free of " + bytesText(room.totalBytes) +
         " (df -h " + room.where + ")";
}

// A /dev/shm size that holds the asked rings with a quarter to spare, in
// whole 64 MiB: what to pass to docker run --shm-size.
uint64_t roomToAskFor(const RingFit& fit) {
  constexpr uint64_t kStep = uint64_t{64} << 20;
  const uint64_t want = fit.askedHostBytes / 3 * 4 + kStep - 1;
  return want / kStep * kStep;
}

std::string optionsText(const ShmOptions& o) {
  return "MCL_SHM_SLOTS=" + std::to_string(o.slots) +
         ", MCL_SHM_SLOT_BYTES=" + std::to_string(o.slotBytes);
}

std::string noRoomText(const RingFit& fit, uint32_t localRanks,
                       uint64_t freeBytes) {
  const uint64_t mib = roomToAskFor(fit) >> 20;
  return "/dev/shm is too small for the shared-memory rings of the " +
         std::to_string(localRanks) +
         " ranks on this host: " + roomText(freeBytes) +
         "; even the smallest rings (" + optionsText(fit.options) + ") need " +
         bytesText(fit.floorHostBytes) +
         ", and mcl leaves a quarter of the room for buffers (as asked, " +
         optionsText(fit.asked) + ", they need " +
         bytesText(fit.askedHostBytes) +
         "). Fix: a larger /dev/shm (docker run --shm-size=" +
         std::to_string(mib) +
         "m, or mount -o remount,size=" + std::to_string(mib) +
         "M /dev/shm), fewer ranks per host, or MCL_TRANSPORT=tcp";
}

std::string shrunkText(const RingFit& fit, uint32_t localRanks,
                       uint64_t freeBytes) {
  const uint64_t mib = roomToAskFor(fit) >> 20;
  return "/dev/shm has " + roomText(freeBytes) +
         "; the shared-memory rings of the " + std::to_string(localRanks) +
         " ranks on this host want " + bytesText(fit.askedHostBytes) + " at " +
         optionsText(fit.asked) + ": shrunk to " + optionsText(fit.options) +
         " (" + bytesText(fit.hostBytes) +
         "), which moves large messages more slowly. For full speed give "
         "/dev/shm " +
         std::to_string(mib) +
         " MiB (docker run --shm-size=" + std::to_string(mib) +
         "m) or run fewer ranks per host; MCL_SHM_SLOTS and "
         "MCL_SHM_SLOT_BYTES set the size yourself";
}

}  // namespace

ShmDevice::ShmDevice(const DeviceInit& init)
    : init_(init), options_(loadShmOptions(*init.params)) {}

Verdict ShmDevice::reaches(int a, int b) const {
  const RankPlace& pa = places_[size_t(a)];
  const RankPlace& pb = places_[size_t(b)];
  if (pa.hostId == pb.hostId) return Verdict::yes();
  return Verdict::no("rank " + std::to_string(b) + " runs on another host (" +
                     pb.hostName +
                     ") and shared memory joins only ranks of "
                     "one host (rank " +
                     std::to_string(a) + " is on " + pa.hostName + ")");
}

void ShmDevice::open(const std::vector<int>& candidates, platform::Deadline) {
  // The segment holds a ring pair for every rank this device may serve. A
  // rank that serves only itself (one rank here, or MCL_TRANSPORT=tcp)
  // keeps its rings in private memory: nothing in /dev/shm.
  if (candidates.size() == 1) {
    segments_ = std::make_unique<ShmSegments>(init_.rank, candidates,
                                              RingMemory::Private, options_);
    return;
  }
  uint64_t room = UINT64_MAX;
  for (int r : candidates)
    room = std::min(room, places_[size_t(r)].shmFreeBytes);
  const RingFit fit =
      fitRings(options_, static_cast<uint32_t>(candidates.size()), room);
  const auto localRanks = static_cast<uint32_t>(candidates.size());
  if (!fit.fits)
    throw error(mclSystemError, "rank %d: %s", init_.rank,
                noRoomText(fit, localRanks, room).c_str());
  // One warning per process, from the host's first rank: not one per rank
  // and communicator.
  static std::atomic<bool> warned{false};
  if (fit.shrunk && init_.rank == candidates.front() && !warned.exchange(true))
    MCL_LOG(Warn, kLogShm, "%s", shrunkText(fit, localRanks, room).c_str());
  options_ = fit.options;
  segments_ = std::make_unique<ShmSegments>(init_.rank, candidates,
                                            RingMemory::Shared, options_);
}

std::vector<uint8_t> ShmDevice::details() const {
  WireWriter w;
  w.u64(uint64_t{options_.slots} * options_.slotBytes);
  w.str(segments_->segmentName());
  return w.take();
}

void ShmDevice::learn(const std::vector<std::vector<uint8_t>>& all,
                      const topology::Cluster&) {
  capacity_ = UINT64_MAX;
  segmentOf_.clear();
  for (const auto& bytes : all) {
    WireReader r(bytes.data(), bytes.size(), "shared-memory details");
    capacity_ = std::min(capacity_, r.u64());
    segmentOf_.push_back(r.str(64));
    r.finish();
  }
}

void ShmDevice::connect(const std::vector<int>& peers, InitExchange&,
                        platform::Deadline) {
  for (int peer : peers) {
    segments_->mapPeer(peer, segmentOf_[size_t(peer)],
                       static_cast<int>(places_[size_t(peer)].pid));
    if (peer != init_.rank) ++peers_;
  }
}

void ShmDevice::afterBarrier() { segments_->unlinkOwnSegment(); }

std::unique_ptr<Connection> ShmDevice::connection(int peer,
                                                  transport::Channel channel) {
  return segments_->connect(peer, channel == transport::Channel::Collective
                                      ? kCollectiveChannel
                                      : kPointToPointChannel);
}

BufferUse ShmDevice::bufferUse() const {
  // A ring per channel from each peer into this rank's segment.
  BufferUse u;
  u.bytesPerWire = uint64_t{kChannels} * options_.slots * options_.slotBytes;
  u.settings = "MCL_SHM_SLOTS x MCL_SHM_SLOT_BYTES";
  u.wires = peers_;
  return u;
}

}  // namespace mcl::transport::shm
