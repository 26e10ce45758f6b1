// A lost cable on an RDMA connection (rdma_connection.h, "A lost cable"):
// giving a wire up, sending its pieces again over the wires left, and the
// receiver's copies that keep its frames free meanwhile.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "base/log.h"
#include "transports/rdma/rdma_connection.h"

namespace mcl::transport::rdma {

namespace {

// A wire with something to answer that answers nothing this long, while
// another wire does, is lost: long beside the probes' longest interval
// (20 ms) and a busy peer's pause, short beside MCL_TIMEOUT.
constexpr int64_t kSilentNs = 1'000'000'000;

}  // namespace

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
  // With a standby, progress() gives the last wire up and moves there.
  if (up == 0 && !hasStandby())
    fail(firstDown, "the port went down (a pulled or failed cable)");
  portsDown_ |= down;
}

void RdmaConnection::loseWire(uint32_t wire, const std::string& why) {
  WireState& lost = state_[wire];
  portsDown_ &= ~(1u << wire);
  if (lost.lost) return;
  std::vector<uint32_t> left;
  for (uint32_t w = 0; w < wires_.size(); ++w)
    if (w != wire && !state_[w].lost) left.push_back(w);
  if (left.empty()) {
    if (!hasStandby()) fail(wire, why);
    enterStandby("cable " + wires_[wire].device + "->" +
                 wires_[wire].remoteDevice + ", the last, is given up (" + why +
                 ")");
    return;
  }
  lost.lost = true;
  lost.moveNext = lost.dataAcked;
  lostBits_ |= static_cast<uint8_t>(1u << wire);
  left_ = left;
  // A probe's answer owed on it goes on a wire left.
  if (answerWire_ == wire) answerWire_ = left_.front();
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
  storeMore();
  // Told on every wire left at once (the peer may have nothing to send,
  // and then no header would carry the lost bits); where no credit or
  // spare receive is free, the next frame's header tells it.
  for (uint32_t w : left_) postControl(w, kFlagLost, "");
}

void RdmaConnection::watchSilence(int64_t now) {
  if (left_.size() == 1) return;  // nowhere to go: the timeouts decide
  for (uint32_t w = 0; w < wires_.size(); ++w) {
    WireState& s = state_[w];
    if (s.lost) continue;
    const uint64_t heard = s.nextTransmission + s.uncreditedReceived;
    if (heard != s.heardMark || s.heardNs == 0) {
      s.heardMark = heard;
      s.heardNs = now;
    }
    if (!needsProbe(w))
      s.waitingNs = 0;
    else if (s.waitingNs == 0)
      s.waitingNs = now;
  }
  for (uint32_t w = 0; w < wires_.size(); ++w) {
    const WireState& s = state_[w];
    if (s.lost || s.waitingNs == 0) continue;
    const int64_t quiet = now - std::max(s.heardNs, s.waitingNs);
    if (quiet < kSilentNs / 2) continue;
    // Another wire that answers shows the peer alive (a stopped or busy
    // peer answers on none: that is for the side channel and MCL_TIMEOUT).
    int answering = -1;
    for (uint32_t x = 0; x < wires_.size(); ++x)
      if (x != w && !state_[x].lost && now - state_[x].heardNs < kSilentNs / 2)
        answering = static_cast<int>(x);
    if (quiet >= kSilentNs && answering >= 0) {
      const Wire& other = wires_[size_t(answering)];
      loseWire(w, "it carries nothing: no frame came back on it for " +
                      std::to_string(quiet / 1000000) +
                      " ms though probes went, while " + other.device + "->" +
                      other.remoteDevice + " answers");
      return;
    }
    if (now - othersProbedNs_ >= kSilentNs / 4) {
      othersProbedNs_ = now;
      for (uint32_t x = 0; x < wires_.size(); ++x)
        if (x != w && !state_[x].lost) postControl(x, kFlagProbe, "");
    }
  }
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
    if (!dataRoom(to)) {
      // Again at the next progress(); a wait on a credit probes, in case
      // the frame that returns it was lost.
      if (creditsLeft(to) == 0) state_[to].starved = true;
      return;
    }
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
// So from a loss on, each piece within a window is copied out and its
// frame given back at once. Before a loss, credits kept the sender within
// wires x depth pieces of the reader; a copied piece gives its credit back
// early, so the sender may then run as far ahead as the window plus the
// credits. So at each loss, arrived_ grows by wires x depth and the window
// is all of it but that: every piece the sender could have out when the
// loss came lies within the new window (each one present is copied now,
// and its frame freed), and the sender stays within arrived_.
void RdmaConnection::storeMore() {
  const size_t payload = shape_.frameBytes - kFrameHeaderBytes;
  const size_t perLoss = wires_.size() * size_t(shape_.depth);
  const size_t old = arrived_.size();
  storing_ = true;
  std::vector<Arrived> before = std::move(arrived_);
  std::vector<std::byte> beforeStored = std::move(stored_);
  arrived_.assign(old + perLoss, Arrived{});
  stored_.assign(arrived_.size() * payload, std::byte{0});
  storeWindow_ = arrived_.size() - perLoss;
  for (uint64_t seq = nextRecvSeq_; seq < nextRecvSeq_ + old; ++seq) {
    const Arrived& a = before[seq % old];
    if (!a.present) continue;
    Arrived& kept = arrived_[seq % arrived_.size()];
    kept = a;
    if (a.stored)
      std::memcpy(stored_.data() + (seq % arrived_.size()) * payload,
                  beforeStored.data() + (seq % old) * payload, a.bytes);
    else if (seq != nextRecvSeq_)
      storeArrived(seq, kept);
  }
  // The piece peekRecv serves may be in the caller's hands: in its frame
  // (not copied, above) or in the copies just replaced, which then stay
  // until it is read.
  const Arrived& current = arrived_[nextRecvSeq_ % arrived_.size()];
  if (current.present && current.stored) retired_ = std::move(beforeStored);
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
