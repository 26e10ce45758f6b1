// A connection to a peer on the same host: we produce into our ring in the
// peer's segment and consume from the peer's ring in our own segment.
#pragma once

#include "transports/shm/shm_layout.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include "transports/shm/store_choice.h"
#include "transports/transport.h"

namespace mcl::transport::shm {

class ShmConnection final : public Connection {
 public:
  // outbound: the ring for us in the peer's segment; inbound: the peer's ring
  // in ours. peerHeader holds the doorbell to ring after publishing a piece
  // (the peer may wait for data) or freeing a slot (it may wait for room).
  ShmConnection(int peerRank, int peerPid, RingView outbound,
                SegmentHeader* peerHeader, RingView inbound, RingStores stores);

  std::span<std::byte> acquireSend(size_t maxBytes) override;
  void commitSend(size_t bytes) override;
  std::span<const std::byte> peekRecv() override;
  void releaseRecv(size_t bytes) override;
  bool peerAlive() const override;
  std::string peerGoneReason() const override;
  void sayFarewell(const std::string& reason) override;
  const char* linkName() const override { return "shm"; }
  bool choosesSlotStores(size_t bytes) const override {
    return copies_.chooses(bytes);
  }
  bool streamNextSlot(bool fold) override {
    return (fold ? folds_ : copies_).streamNext();
  }
  void recordSlotStore(bool fold, bool streamed, size_t bytes,
                       std::chrono::nanoseconds took) override {
    (fold ? folds_ : copies_).record(streamed, bytes, took);
  }

 private:
  int peerRank_;
  int peerPid_;
  RingView out_;
  SegmentHeader* peerHeader_;
  uint64_t sendIndex_ = 0;
  uint64_t cachedConsumed_ = 0;  // the consumer's count, re-read when full
  RingView in_;
  uint64_t recvIndex_ = 0;
  uint32_t recvOffset_ = 0;
  // Folds and copies apart: their costs differ (a ring all-reduce sends
  // folds, then copies, on the same connection).
  StoreChoice folds_;
  StoreChoice copies_;
};

// Rings the doorbell of the segment's owner if it sleeps. Called after
// every publish or release.
void notifyOwner(SegmentHeader* header);

}  // namespace mcl::transport::shm
