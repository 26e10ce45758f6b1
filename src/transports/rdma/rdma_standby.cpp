// An RDMA connection's last cable lost: it goes on over its standby, a TCP
// connection to the same peer and channel that init made beside it (over
// another cable, the LAN: whatever TCP would have chosen for the pair).
//
// The side that finds every wire lost (its port down, a send in error)
// first tells the peer on the standby, then sends there every piece the
// peer had not acknowledged, oldest first (each still whole in its wire's
// send frame: a lost wire's frames are never reused), then each new piece.
// A peer that hears the notice before it finds its own wires lost (the
// cable went down at one end only) moves too. The receiver reads what RDMA
// delivered before the move in order, then each piece from the standby,
// dropping the records of pieces it read already; it polls RDMA no more,
// so every piece it did not take from there is one its peer sends again.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "base/error.h"
#include "base/log.h"
#include "transports/rdma/rdma_connection.h"

namespace mcl::transport::rdma {

namespace {

constexpr size_t kHead = kStandbyHead;

// Before the move, how often the standby is looked at for the peer's
// notice: as often as the ports are (a system call each time, never on
// the hot path).
constexpr int64_t kStandbyLookNs = 20'000'000;

}  // namespace

bool RdmaConnection::keepStandby(std::unique_ptr<Connection> standby) {
  // The set's keeper may service this connection already.
  set_->beginUse();
  standby_ = std::move(standby);
  standbyLink_ =
      std::string(standby_->linkName()) + " (standby of " + link_ + ")";
  set_->endUse();
  return true;
}

void RdmaConnection::failStandby(const std::string& what) const {
  broken_ = true;
  Error e =
      error(mclRemoteError,
            "rank %d: rdma to rank %d, carried on over its standby %s: %s",
            rank_, peerRank_, standbyLink_.c_str(), what.c_str());
  if (failure_.empty()) failure_ = e.what();
  throw e;
}

void RdmaConnection::enterStandby(const std::string& why) {
  if (onStandby_) return;
  onStandby_ = true;
  noticeDue_ = true;
  const auto depth = uint64_t(shape_.depth);
  for (uint32_t w = 0; w < wires_.size(); ++w) {
    WireState& s = state_[w];
    if (!s.lost) {
      s.lost = true;
      s.moveNext = s.dataAcked;
      set_->count(LossEvent::WireLost, 1);
    }
    lostBits_ |= static_cast<uint8_t>(1u << w);
    // Pieces moved onto a wire lost later are its own from then on.
    for (uint64_t i = std::max(s.moveNext, s.dataAcked); i < s.dataSent; ++i) {
      const auto* h =
          reinterpret_cast<const FrameHeader*>(sendFrame(w, i % depth));
      moving_.push_back({h->seq, w, i});
    }
  }
  left_.clear();
  portsDown_ = 0;
  answerDue_ = false;
  std::sort(moving_.begin(), moving_.end(),
            [](const Moving& a, const Moving& b) { return a.seq < b.seq; });
  moving_.erase(std::unique(moving_.begin(), moving_.end(),
                            [](const Moving& a, const Moving& b) {
                              return a.seq == b.seq;
                            }),
                moving_.end());
  if (set_->firstTime("standby " + std::to_string(peerRank_)))
    MCL_LOG(Warn, kLogColl,
            "rank %d: rdma to rank %d: %s: no cable to it is left, and the "
            "job goes on over %s, at TCP's speed; the %zu pieces the peer "
            "had not acknowledged go again there (mcl-perf counts them)",
            rank_, peerRank_, why.c_str(), standby_->linkName(),
            moving_.size());
  sendOnStandby();
}

bool RdmaConnection::sendOnStandby() {
  if (standbyAcquired_) return false;  // the caller's piece goes first
  if (noticeDue_) {
    std::span<std::byte> room = standby_->acquireSend(kHead);
    if (room.size() < kHead) return false;
    StandbyRecord notice{};
    notice.seq = nextRecvSeq_;
    notice.flags = kStandbyNotice;
    std::memcpy(room.data(), &notice, kHead);
    standby_->commitSend(kHead);
    noticeDue_ = false;
  }
  const auto depth = uint64_t(shape_.depth);
  while (movingNext_ < moving_.size()) {
    const Moving& m = moving_[movingNext_];
    const std::byte* frame = sendFrame(m.wire, m.index % depth);
    const auto* h = reinterpret_cast<const FrameHeader*>(frame);
    const uint32_t left = h->bytes - movingOffset_;
    std::span<std::byte> room = standby_->acquireSend(kHead + left);
    if (room.empty()) return false;
    if (room.size() <= kHead) failSlotTooSmall(room.size());
    const auto part =
        static_cast<uint32_t>(std::min<size_t>(left, room.size() - kHead));
    StandbyRecord r{};
    r.seq = m.seq;
    r.bytes = part;
    r.flags = part == left ? kStandbyLastPart : 0;
    std::memcpy(room.data(), &r, kHead);
    std::memcpy(room.data() + kHead, frame + kFrameHeaderBytes + movingOffset_,
                part);
    standby_->commitSend(kHead + part);
    movingOffset_ += part;
    if (movingOffset_ < h->bytes) continue;
    movingOffset_ = 0;
    ++movingNext_;
    set_->count(LossEvent::PieceMoved, 1);
  }
  return true;
}

bool RdmaConnection::readStandbyHead() {
  if (haveHead_) return true;
  while (headHave_ < kHead) {
    std::span<const std::byte> in = standby_->peekRecv();
    if (in.empty()) return false;
    const size_t n = std::min<size_t>(in.size(), kHead - headHave_);
    std::memcpy(reinterpret_cast<std::byte*>(&head_) + headHave_, in.data(), n);
    standby_->releaseRecv(n);
    headHave_ += static_cast<uint32_t>(n);
  }
  headHave_ = 0;
  haveHead_ = true;
  headLeft_ = head_.bytes;
  const bool notice = (head_.flags & kStandbyNotice) != 0;
  if (notice != (head_.bytes == 0) ||
      (head_.flags & ~(kStandbyNotice | kStandbyLastPart)) != 0)
    failStandby("a malformed record (flags " + std::to_string(head_.flags) +
                ", " + std::to_string(head_.bytes) + " bytes)");
  return true;
}

std::span<const std::byte> RdmaConnection::peekStandby() {
  for (;;) {
    if (!readStandbyHead()) return {};
    if (head_.flags & kStandbyNotice) {
      haveHead_ = false;
      continue;
    }
    if (head_.seq > nextRecvSeq_)
      failStandby("piece " + std::to_string(head_.seq) + " came before piece " +
                  std::to_string(nextRecvSeq_) + ", which never came");
    std::span<const std::byte> in = standby_->peekRecv();
    if (in.empty()) return {};
    const size_t n = std::min<size_t>(in.size(), headLeft_);
    if (head_.seq == nextRecvSeq_) return in.first(n);
    // Read already, over RDMA before the move: dropped.
    standby_->releaseRecv(n);
    headLeft_ -= static_cast<uint32_t>(n);
    if (headLeft_ == 0) {
      haveHead_ = false;
      set_->count(LossEvent::Duplicate, 1);
    }
  }
}

void RdmaConnection::releaseStandby(size_t bytes) {
  standby_->releaseRecv(bytes);
  headLeft_ -= static_cast<uint32_t>(bytes);
  if (headLeft_ > 0) return;
  haveHead_ = false;
  if (head_.flags & kStandbyLastPart) ++nextRecvSeq_;
}

void RdmaConnection::watchStandby(int64_t now) {
  if (!hasStandby() || onStandby_ || now - standbyCheckedNs_ < kStandbyLookNs)
    return;
  standbyCheckedNs_ = now;
  bool moved = false;
  try {
    moved = readStandbyHead();
  } catch (const std::exception& e) {
    if (broken_) throw;
    // The standby broke while RDMA carries (the peer closed it): the
    // connection goes on without one. The object stays (its transport
    // still counts it), never used again.
    MCL_LOG(Info, kLogColl,
            "rank %d: rdma to rank %d: its tcp standby is gone (%s); a lost "
            "last cable will end the job",
            rank_, peerRank_, e.what());
    standbyGone_ = true;
    return;
  }
  if (!moved) return;
  std::string cables;
  for (const Wire& w : wires_)
    cables += (cables.empty() ? "" : " + ") + w.device + "->" + w.remoteDevice;
  enterStandby("rank " + std::to_string(peerRank_) + " gave up every cable " +
               "to this rank, " + cables + " (it said so on the standby)");
}

void RdmaConnection::failSlotTooSmall(size_t slotBytes) const {
  failStandby("its pieces of " + std::to_string(slotBytes) +
              " bytes hold nothing behind a record's 64-byte head "
              "(MCL_TCP_SLOT_BYTES: 128 at least)");
}

void RdmaConnection::tend() {
  if (onStandby_) standby_->tend();
}

std::string RdmaConnection::linkTrouble() {
  return onStandby_ ? standby_->linkTrouble() : "";
}

void RdmaConnection::releaseCallerMemory() {
  if (onStandby_) standby_->releaseCallerMemory();
}

}  // namespace mcl::transport::rdma
