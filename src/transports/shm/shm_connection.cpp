#include "transports/shm/shm_connection.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "base/error.h"
#include "platform/host_identity.h"
#include "platform/wait_on_address.h"

namespace mcl::transport::shm {

void notifyOwner(SegmentHeader* header) {
  // Pairs with the fence in ShmWaker::arm: either the sleeper sees our data
  // on its last check, or we see its `sleeping` flag here.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (header->sleeping.load(std::memory_order_relaxed) != 0) {
    header->doorbell.fetch_add(1, std::memory_order_relaxed);
    platform::wakeAddress(&header->doorbell);
  }
}

ShmConnection::ShmConnection(int peerRank, int peerPid, RingView outbound,
                             SegmentHeader* peerHeader, RingView inbound,
                             RingStores stores)
    : peerRank_(peerRank),
      peerPid_(peerPid),
      out_(outbound),
      peerHeader_(peerHeader),
      in_(inbound),
      folds_(stores),
      copies_(stores) {}

std::span<std::byte> ShmConnection::acquireSend(size_t maxBytes) {
  if (sendIndex_ - cachedConsumed_ >= out_.slotCount) {
    cachedConsumed_ = out_.control->consumed.load(std::memory_order_acquire);
    if (sendIndex_ - cachedConsumed_ >= out_.slotCount) return {};
  }
  return {out_.payload(sendIndex_), std::min<size_t>(maxBytes, out_.slotBytes)};
}

void ShmConnection::commitSend(size_t bytes) {
  SlotHeader* slot = out_.slot(sendIndex_);
  slot->length = static_cast<uint32_t>(bytes);
  ++sendIndex_;
  slot->sequence.store(sendIndex_, std::memory_order_release);
  notifyOwner(peerHeader_);
}

std::span<const std::byte> ShmConnection::peekRecv() {
  SlotHeader* slot = in_.slot(recvIndex_);
  if (slot->sequence.load(std::memory_order_acquire) != recvIndex_ + 1)
    return {};
  uint32_t length = slot->length;
  if (length == 0 || length > in_.slotBytes || recvOffset_ >= length)
    throw error(mclRemoteError,
                "shm: rank %d wrote a corrupt slot (length %u, slot holds %u)",
                peerRank_, length, in_.slotBytes);
  return {in_.payload(recvIndex_) + recvOffset_, length - recvOffset_};
}

void ShmConnection::releaseRecv(size_t bytes) {
  recvOffset_ += static_cast<uint32_t>(bytes);
  if (recvOffset_ < in_.slot(recvIndex_)->length) return;
  recvOffset_ = 0;
  ++recvIndex_;
  in_.control->consumed.store(recvIndex_, std::memory_order_release);
  // The producer's doorbell lives in its own segment: it is the one that
  // may be waiting for room.
  notifyOwner(peerHeader_);
}

// The peer's farewell sits in the control of the ring we produce into
// (the peer consumes it); ours in the ring we consume from.
bool ShmConnection::peerAlive() const {
  return out_.control->farewell.load(std::memory_order_acquire) == 0 &&
         platform::processAlive(peerPid_);
}

std::string ShmConnection::peerGoneReason() const {
  if (out_.control->farewell.load(std::memory_order_acquire) == 0)
    return "its process exited";
  // The peer wrote the text once, before the flag, and never again; the
  // last byte is ours to terminate whatever it holds.
  char text[kFarewellBytes];
  memcpy(text, out_.control->farewellText, sizeof(text));
  text[sizeof(text) - 1] = '\0';
  return text;
}

void ShmConnection::sayFarewell(const std::string& reason) {
  RingControl* control = in_.control;
  if (control->farewell.load(std::memory_order_relaxed) != 0) return;
  const size_t n = std::min(reason.size(), kFarewellBytes - 1);
  memcpy(control->farewellText, reason.data(), n);
  control->farewellText[n] = '\0';
  control->farewell.store(1, std::memory_order_release);
  notifyOwner(peerHeader_);  // it may sleep waiting on us
}

}  // namespace mcl::transport::shm
