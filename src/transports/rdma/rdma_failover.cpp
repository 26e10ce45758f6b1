// A lost cable on an RDMA connection (rdma_connection.h, "A lost cable"):
// giving a wire up, sending its pieces again over the wires left, and the
// receiver's copies that keep its frames free meanwhile.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/log.h"
#include "transports/rdma/rdma_connection.h"

namespace mcl::transport::rdma {

uint32_t RdmaConnection::wireFor(uint64_t seq) const {
  if (left_.empty()) return static_cast<uint32_t>(seq % wires_.size());
  return left_[seq % left_.size()];
}

void RdmaConnection::checkPorts() const {
  uint32_t down = 0;
  uint32_t firstDown = 0;
  size_t up = 0;
  for (uint32_t w = 0; w < wires_.size(); ++w) {
    if (state_[w].lost) continue;
    if (wires_[w].context == nullptr ||
        wires_[w].context->queryPort().state == PortState::Active) {
      ++up;
    } else {
      if (down == 0) firstDown = w;
      down |= 1u << w;
    }
  }
  if (down == 0) return;
  if (up == 0) fail(firstDown, "the port went down (a pulled or failed cable)");
  portsDown_ |= down;
}

void RdmaConnection::loseWire(uint32_t wire, const std::string& why) {
  WireState& lost = state_[wire];
  portsDown_ &= ~(1u << wire);
  if (lost.lost) return;
  std::vector<uint32_t> left;
  for (uint32_t w = 0; w < wires_.size(); ++w)
    if (w != wire && !state_[w].lost) left.push_back(w);
  if (left.empty()) fail(wire, why);
  lost.lost = true;
  lost.moveNext = lost.dataAcked;
  lostBits_ |= static_cast<uint8_t>(1u << wire);
  left_ = left;
  set_->count(LossEvent::WireLost, 1);
  std::string over;
  for (uint32_t w : left_)
    over += (over.empty() ? "" : " + ") + wires_[w].device + "->" +
            wires_[w].remoteDevice;
  const std::string cable =
      wires_[wire].device + "->" + wires_[wire].remoteDevice;
  if (set_->firstTime("lost " + std::to_string(peerRank_) + " " + cable))
    MCL_LOG(Warn, kLogColl,
            "rank %d: rdma to rank %d: cable %s is given up (%s): what it "
            "carried goes on over %s, %zu of %zu cables left; the pieces the "
            "peer had not acknowledged go again (mcl-perf counts them)",
            rank_, peerRank_, cable.c_str(), why.c_str(), over.c_str(),
            left_.size(), wires_.size());
  if (!storing_) startStoring();
  // Told on every wire left at once (the peer may have nothing to send,
  // and then no header would carry the lost bits); where no credit or
  // spare receive is free, the next frame's header tells it.
  for (uint32_t w : left_) postControl(w, kFlagLost, "");
}

bool RdmaConnection::movesPending() const {
  for (const WireState& s : state_)
    if (s.lost && std::max(s.moveNext, s.dataAcked) < s.dataSent) return true;
  return false;
}

void RdmaConnection::movePieces() {
  const auto depth = uint64_t(shape_.depth);
  for (;;) {
    // The oldest piece still to move: the receiver takes pieces in order,
    // and a newer one sent first could hold the frame it needs.
    uint32_t from = 0;
    uint64_t seq = UINT64_MAX;
    for (uint32_t w = 0; w < wires_.size(); ++w) {
      WireState& s = state_[w];
      if (!s.lost) continue;
      s.moveNext = std::max(s.moveNext, s.dataAcked);
      if (s.moveNext >= s.dataSent) continue;
      const auto* h = reinterpret_cast<const FrameHeader*>(
          sendFrame(w, s.moveNext % depth));
      if (h->seq < seq) {
        seq = h->seq;
        from = w;
      }
    }
    if (seq == UINT64_MAX) return;
    const uint32_t to = wireFor(seq);
    if (!dataRoom(to)) return;  // again at the next progress()
    WireState& f = state_[from];
    WireState& t = state_[to];
    // The lost wire's send frames are never reused: the piece is still
    // whole there, header (seq, bytes) and payload.
    const std::byte* piece = sendFrame(from, f.moveNext % depth);
    const auto* h = reinterpret_cast<const FrameHeader*>(piece);
    std::memcpy(sendFrame(to, t.dataSent % depth), piece,
                kFrameHeaderBytes + h->bytes);
    postData(to, t.dataSent);
    ++t.resendNext;
    ++t.dataSent;
    ++f.moveNext;
    set_->count(LossEvent::PieceMoved, 1);
  }
}

// The sender may hold back nothing: pieces newer than one that comes again
// may fill every receive frame of the wires left, and a frame comes back
// only when its piece is read, which waits on the one that comes again.
// So every piece within the window is copied out and its frame given back
// at once. The window is the arrived_ entries before the loss (wires x
// depth): every piece the wires could hold then lies within it, so none
// can block a frame for good. Copied pieces no longer bound what the
// sender may have out: at most that window plus the frames' credits, so
// arrived_ doubles to cover it.
void RdmaConnection::startStoring() {
  storing_ = true;
  storeWindow_ = arrived_.size();
  std::vector<Arrived> before = std::move(arrived_);
  arrived_.assign(2 * before.size(), Arrived{});
  stored_.resize(arrived_.size() * (shape_.frameBytes - kFrameHeaderBytes));
  for (uint64_t seq = nextRecvSeq_; seq < nextRecvSeq_ + before.size(); ++seq) {
    const Arrived& a = before[seq % before.size()];
    if (!a.present) continue;
    Arrived& moved = arrived_[seq % arrived_.size()];
    moved = a;
    // The piece peekRecv serves may be in the caller's hands: it stays in
    // its frame until it is read.
    if (seq != nextRecvSeq_) storeArrived(seq, moved);
  }
  sendControlFrames();
}

void RdmaConnection::storeArrived(uint64_t seq, Arrived& a) {
  const size_t payload = shape_.frameBytes - kFrameHeaderBytes;
  std::memcpy(stored_.data() + (seq % arrived_.size()) * payload,
              recvFrame(a.wire, a.slot) + kFrameHeaderBytes, a.bytes);
  a.stored = true;
  postReceive(a.wire, a.slot, Credit::Data);
}

const std::byte* RdmaConnection::payloadOf(uint64_t seq,
                                           const Arrived& a) const {
  if (!a.stored)
    return wires_[a.wire].recvFrames.data() +
           size_t(a.slot) * shape_.frameBytes + kFrameHeaderBytes;
  const size_t payload = shape_.frameBytes - kFrameHeaderBytes;
  return stored_.data() + (seq % arrived_.size()) * payload;
}

}  // namespace mcl::transport::rdma
