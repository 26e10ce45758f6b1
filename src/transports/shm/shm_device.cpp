#include "transports/shm/shm_device.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/wire.h"

namespace mcl::transport::shm {

namespace {

std::string segmentName(uint64_t commId, int rank) {
  char name[40];
  snprintf(name, sizeof(name), "/mcl-%016" PRIx64 "-%d", commId, rank);
  return name;
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
  // The segment holds a ring pair for every rank this device may serve.
  segments_ = std::make_unique<ShmSegments>(
      init_.rank, candidates, segmentName(commId_, init_.rank), options_);
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
