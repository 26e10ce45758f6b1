#include "transports/rdma/rdma_connection.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"

namespace mcl::transport::rdma {

uint32_t sendLength(uint32_t bytes, uint32_t frameBytes) {
  const uint32_t frames = (frameBytes + kTbFrameBytes - 1) / kTbFrameBytes;
  const uint32_t least = (frames - 1) * kTbFrameBytes + 1;
  return std::max(bytes, std::min(frameBytes, (least + 63) / 64 * 64));
}

size_t usableCapacity(const FrameShape& shape) {
  // The spare receives are never granted, and a step's pieces never share
  // a frame: two ring steps (each half of this) must fit in the granted
  // frames, or a ring of full windows deadlocks. A step forwarded from
  // shared memory or TCP arrives in pieces whose boundaries need not fall
  // on frame boundaries: each costs a frame more, and a step spans at most
  // two such pieces (theirs are 64 KiB and up).
  const size_t granted = size_t(shape.depth) - kSpareReceives;
  const size_t framesPerStep = std::max<size_t>(1, granted / 2 - 2);
  return 2 * framesPerStep * (shape.frameBytes - kFrameHeaderBytes);
}

RdmaConnection::RdmaConnection(int rank, int peerRank, std::vector<Wire> wires,
                               const FrameShape& shape, std::string link,
                               std::shared_ptr<ConnectionSet> set)
    : rank_(rank),
      peerRank_(peerRank),
      wires_(std::move(wires)),
      state_(wires_.size()),
      shape_(shape),
      link_(std::move(link)),
      set_(std::move(set)),
      arrived_(wires_.size() * size_t(shape.depth)) {
  for (uint32_t w = 0; w < wires_.size(); ++w) {
    state_[w].inFlight.assign(size_t(shape_.depth), 0);
    for (uint32_t slot = 0; slot < uint32_t(shape_.depth); ++slot)
      postReceive(w, slot, Credit::None);  // the initial credits
  }
  set_->add(this);
}

RdmaConnection::~RdmaConnection() { set_->remove(this); }

std::byte* RdmaConnection::sendFrame(uint32_t wire, uint64_t index) {
  return wires_[wire].sendFrames.data() + index * shape_.frameBytes;
}

std::byte* RdmaConnection::recvFrame(uint32_t wire, uint32_t slot) {
  return wires_[wire].recvFrames.data() + size_t(slot) * shape_.frameBytes;
}

void RdmaConnection::fail(uint32_t wire, const std::string& what) const {
  broken_ = true;
  Error e = error(mclRemoteError, "rank %d: rdma to rank %d over %s->%s: %s",
                  rank_, peerRank_, wires_[wire].device.c_str(),
                  wires_[wire].remoteDevice.c_str(), what.c_str());
  if (failure_.empty()) failure_ = e.what();
  throw e;
}

void RdmaConnection::postReceive(uint32_t wire, uint32_t slot, Credit credit) {
  if (state_[wire].lost) return;  // nothing comes on it again
  Wire& w = wires_[wire];
  w.qp->postRecv(slot, *w.recvMr, recvFrame(wire, slot), shape_.frameBytes);
  if (credit != Credit::None) ++state_[wire].credits;
  if (credit == Credit::Data) ++state_[wire].dataCredits;
}

uint64_t RdmaConnection::creditsLeft(uint32_t wire) const {
  const WireState& s = state_[wire];
  return uint64_t(shape_.depth - kSpareReceives) + s.creditsGranted -
         s.transmissions;
}

uint64_t RdmaConnection::reservedFor(uint32_t wire) const {
  return acquired_ && acquiredWire_ == wire ? 1 : 0;
}

// Room in the send queue (leaving its place to a data frame acquired and
// not committed), and for a control frame a free control slot.
bool RdmaConnection::sendRoom(uint32_t wire, bool control) const {
  const WireState& s = state_[wire];
  const uint64_t queue = uint64_t(shape_.depth) - reservedFor(wire);
  if (s.sendsPosted - s.sendsDone >= queue) return false;
  return !control || s.controlPosted - s.controlDone < kControlSlots;
}

void RdmaConnection::postData(uint32_t wire, uint64_t piece) {
  WireState& s = state_[wire];
  const size_t frameIndex = piece % uint64_t(shape_.depth);
  std::byte* frame = sendFrame(wire, frameIndex);
  auto* h = reinterpret_cast<FrameHeader*>(frame);
  h->flags = kFlagCredited;
  writeCounts(wire, *h);
  h->transmission = static_cast<uint32_t>(s.transmissions++);
  h->index = static_cast<uint32_t>(piece);
  Wire& w = wires_[wire];
  const auto bytes = static_cast<uint32_t>(kFrameHeaderBytes + h->bytes);
  // Numbered by its place on this wire (a piece's seq says it no longer
  // once a wire is lost): its completion frees that frame.
  w.qp->postSend(kSendTag | piece, *w.sendMr, frame,
                 sendLength(bytes, shape_.frameBytes));
  ++s.inFlight[frameIndex];
  ++s.sendsPosted;
}

bool RdmaConnection::dataRoom(uint32_t wire) const {
  const WireState& s = state_[wire];
  // Pieces to send again go first; a frame is reused once its piece is
  // acknowledged and its last SEND completed; a frame acquired and not
  // committed keeps its place and its credit.
  // Data may spend every credit: a credit-returning frame without one
  // goes into a spare receive instead (sendControlFrames).
  return !s.lost && s.resendNext == s.dataSent && sendRoom(wire, false) &&
         creditsLeft(wire) > reservedFor(wire) &&
         s.dataSent - s.dataAcked < uint64_t(shape_.depth) &&
         s.inFlight[s.dataSent % uint64_t(shape_.depth)] == 0 &&
         !(acquired_ && acquiredWire_ == wire);
}

std::span<std::byte> RdmaConnection::acquireSend(size_t maxBytes) {
  const size_t room =
      std::min<size_t>(maxBytes, shape_.frameBytes - kFrameHeaderBytes);
  // Acquired before and not committed (a caller that found no room on
  // another connection): the same frame, its place and credit kept.
  if (acquired_)
    return {sendFrame(acquiredWire_,
                      state_[acquiredWire_].dataSent % uint64_t(shape_.depth)) +
                kFrameHeaderBytes,
            room};
  if (onStandby_) {
    // Acquired before and not committed: the same space (TCP gives it).
    if (!standbyAcquired_ && !sendOnStandby()) {
      standby_->progress();
      if (!sendOnStandby()) return {};
    }
    std::span<std::byte> space =
        standby_->acquireSend(std::min(maxBytes, SIZE_MAX / 2) + kStandbyHead);
    if (space.empty()) return {};
    if (space.size() <= kStandbyHead) failSlotTooSmall(space.size());
    standbyAcquired_ = true;
    standbySpace_ = space.data();
    return space.subspan(kStandbyHead);
  }
  const uint32_t wire = wireFor(nextSendSeq_);
  // The pieces of a lost wire go before any new one.
  auto ready = [&] {
    return dataRoom(wire) && (left_.empty() || !movesPending());
  };
  if (!ready()) {
    progress();
    if (!ready()) {
      if (creditsLeft(wire) == 0) state_[wire].starved = true;
      return {};
    }
  }
  acquired_ = true;
  acquiredWire_ = wire;
  return {sendFrame(wire, state_[wire].dataSent % uint64_t(shape_.depth)) +
              kFrameHeaderBytes,
          room};
}

void RdmaConnection::commitSend(size_t bytes) {
  if (standbyAcquired_) {
    StandbyRecord r{};
    r.seq = nextSendSeq_++;
    r.bytes = static_cast<uint32_t>(bytes);
    r.flags = kStandbyLastPart;
    std::memcpy(standbySpace_, &r, kStandbyHead);
    standbyAcquired_ = false;
    bytesSent_ += bytes;
    standby_->commitSend(kStandbyHead + bytes);
    return;
  }
  const uint32_t wire = acquiredWire_;
  WireState& s = state_[wire];
  acquired_ = false;
  auto* h = reinterpret_cast<FrameHeader*>(
      sendFrame(wire, s.dataSent % uint64_t(shape_.depth)));
  h->seq = nextSendSeq_;
  h->bytes = static_cast<uint32_t>(bytes);
  // Its wire was lost since it was acquired: the piece goes with the
  // wire's others, over the wires left (movePieces).
  if (!s.lost) postData(wire, s.dataSent);
  // A go-back that came while the frame was acquired resends it too.
  if (s.resendNext == s.dataSent) ++s.resendNext;
  ++s.dataSent;
  s.starved = false;
  ++nextSendSeq_;
  bytesSent_ += bytes;
  if (onStandby_) {
    // Acquired over RDMA before the move: it follows the pieces moved.
    moving_.push_back({h->seq, wire, s.dataSent - 1});
    sendOnStandby();
  } else if (s.lost) {
    movePieces();
  }
}

void RdmaConnection::handleReceive(uint32_t wire, const Completion& c) {
  auto slot = static_cast<uint32_t>(c.wrId);
  if (c.bytes < kFrameHeaderBytes) fail(wire, "a frame without a header");
  const auto& h = *reinterpret_cast<const FrameHeader*>(recvFrame(wire, slot));
  if (h.wires != wires_.size() || h.bytes + kFrameHeaderBytes > c.bytes)
    fail(wire, "a malformed frame (the two ends disagree on the wires)");
  readCounts(wire, h);
  // Moved to the standby there: the peer sends this frame's piece again.
  if (onStandby_) return;
  catchUp(wire, h.before);
  if (h.flags & kFlagCredited) {
    if (!takeTransmission(wire, slot, h)) return;
  } else {
    ++state_[wire].uncreditedReceived;
  }
  applyResendRequests(h);
  if (h.seq == kControlFrame)
    handleControl(wire, slot, h);
  else
    handleData(wire, slot, h);
}

bool RdmaConnection::takeTransmission(uint32_t wire, uint32_t slot,
                                      const FrameHeader& h) {
  WireState& s = state_[wire];
  const auto ahead = static_cast<int32_t>(
      h.transmission - static_cast<uint32_t>(s.nextTransmission));
  if (ahead < 0) {  // a copy of a transmission already in: no credit spent
    set_->count(LossEvent::Duplicate, 1);
    postReceive(wire, slot, Credit::None);
    return false;
  }
  catchUp(wire, h.transmission);  // those lost before it
  ++s.nextTransmission;
  set_->count(LossEvent::Received, 1);
  ++s.windowReceived;
  return true;
}

void RdmaConnection::handleData(uint32_t wire, uint32_t slot,
                                const FrameHeader& h) {
  WireState& s = state_[wire];
  // Every piece holds bytes (Connection::commitSend): an empty one would
  // never be read, and the stream would stall behind it until the timeout.
  if (h.bytes == 0) fail(wire, "a data frame without data");
  // Piece k goes on wire k % wires until a wire is lost at either end.
  const bool striped = left_.empty() && h.lost == 0;
  if ((striped && h.seq % wires_.size() != wire) || !(h.flags & kFlagCredited))
    fail(wire, "piece " + std::to_string(h.seq) + " came malformed");
  const auto ahead =
      static_cast<int32_t>(h.index - static_cast<uint32_t>(s.dataReceived));
  if (ahead != 0) {
    // An old piece sent again, or one after a gap: dropped (go-back-N),
    // and after a gap the sender is asked for the wire's data again, once
    // per gap (a probe covers a request that is lost).
    postReceive(wire, slot, Credit::Data);
    if (ahead > 0 && s.askedResendAt != s.dataReceived) s.resendWanted = true;
    return;
  }
  ++s.dataReceived;
  const uint64_t window = arrived_.size();
  if (h.seq >= nextRecvSeq_ && h.seq - nextRecvSeq_ >= window)
    fail(wire, "piece " + std::to_string(h.seq) + " came beyond the window");
  // A piece sent again over another wire after a loss, which came (or was
  // read) already: dropped.
  if (h.seq < nextRecvSeq_ || arrived_[h.seq % window].present) {
    set_->count(LossEvent::Duplicate, 1);
    postReceive(wire, slot, Credit::Data);
    return;
  }
  Arrived& a = arrived_[h.seq % window];
  a = {true, false, wire, slot, h.bytes};
  if (storing_ && h.seq - nextRecvSeq_ < storeWindow_) storeArrived(h.seq, a);
}

void RdmaConnection::handleCompletion(uint32_t wire, const Completion& c) {
  if (onStandby_) return;  // the peer sends again what was not taken
  // A lost wire sends nothing more, but what comes on it is still read:
  // the peer may not know yet, and its frames say which wires it gave up
  // (where the two ends gave up different ones, none is left, and that is
  // found only so). Errors there are the wire's end, already taken.
  if (state_[wire].lost) {
    if (c.ok && c.recv) handleReceive(wire, c);
    return;
  }
  if (!c.ok) {
    // A failed work request leaves its queue pair in error: the wire is
    // given up (the connection fails when it was the last).
    uint64_t number = c.wrId & kWrNumberMask;
    const bool data = !c.recv && !(c.wrId & kControlTag);
    // A data frame is kept until its send completes: the piece is there.
    if (data)
      number = reinterpret_cast<const FrameHeader*>(
                   sendFrame(wire, number % uint64_t(shape_.depth)))
                   ->seq;
    loseWire(wire, (c.recv                 ? "the receive into frame slot "
                    : c.wrId & kControlTag ? "the send of control frame "
                                           : "the send of piece ") +
                       std::to_string(number) +
                       " completed with an error: " + c.error);
    return;
  }
  if (c.recv) {
    handleReceive(wire, c);
    return;
  }
  WireState& s = state_[wire];
  ++s.sendsDone;
  if (c.wrId & kControlTag) {
    ++s.controlDone;
    return;
  }
  --s.inFlight[(c.wrId & kWrNumberMask) % uint64_t(shape_.depth)];
}

void RdmaConnection::progress() {
  for (uint32_t w = 0; !onStandby_ && portsDown_ != 0 && w < wires_.size(); ++w)
    if ((portsDown_ >> w) & 1)
      loseWire(w, "its port went down: a pulled or failed cable");
  Completion done[16];
  for (uint32_t w = 0; w < wires_.size() && !onStandby_; ++w) {
    int n = wires_[w].cq->poll(done, 16);
    for (int i = 0; i < n; ++i) handleCompletion(w, done[i]);
  }
  // Moved now or before (a completion there may have been the last wire's).
  if (onStandby_) {
    sendOnStandby();
    standby_->progress();
    return;
  }
  for (uint32_t w = 0; w < wires_.size(); ++w)
    if (!state_[w].lost && state_[w].resendNext < state_[w].dataSent) resend(w);
  if (!left_.empty()) movePieces();
  sendControlFrames();
  lookAtClock();
}

std::span<const std::byte> RdmaConnection::peekRecv() {
  Arrived* a = &arrived_[nextRecvSeq_ % arrived_.size()];
  if (!a->present) {
    progress();
    // A loss found there grows arrived_ (storeMore): found again.
    a = &arrived_[nextRecvSeq_ % arrived_.size()];
    if (!a->present)
      return onStandby_ ? peekStandby() : std::span<const std::byte>{};
  }
  return {payloadOf(nextRecvSeq_, *a) + recvOffset_, a->bytes - recvOffset_};
}

void RdmaConnection::releaseRecv(size_t bytes) {
  Arrived& a = arrived_[nextRecvSeq_ % arrived_.size()];
  if (onStandby_ && !a.present) {
    releaseStandby(bytes);
    return;
  }
  recvOffset_ += static_cast<uint32_t>(bytes);
  if (recvOffset_ < a.bytes) return;
  a.present = false;
  recvOffset_ = 0;
  ++nextRecvSeq_;
  // A piece copied out gave its frame back when it was.
  if (!a.stored) postReceive(a.wire, a.slot, Credit::Data);
  a.stored = false;
  if (!retired_.empty()) std::vector<std::byte>().swap(retired_);
  sendControlFrames();
}

bool RdmaConnection::peerAlive() const {
  if (broken_) return false;
  if (arrived_[nextRecvSeq_ % arrived_.size()].present) return true;
  if (onStandby_) return standby_->peerAlive();
  checkPorts();
  // Gone once the wire that carries the next piece has said farewell and
  // the piece is not in: nothing comes after a farewell on a wire. After a
  // loss the piece may come on any wire left: gone once all have.
  if (left_.empty())
    return !state_[nextRecvSeq_ % wires_.size()].peerSaidFarewell;
  for (uint32_t w : left_)
    if (!state_[w].peerSaidFarewell) return true;
  return false;
}

bool RdmaConnection::peerAcceptsSends() const {
  if (onStandby_) return !broken_ && standby_->peerAcceptsSends();
  if (!peerAlive()) return false;
  for (const WireState& s : state_)
    if (!s.lost && s.peerSaidFarewell) return false;
  return true;
}

std::string RdmaConnection::peerGoneReason() const {
  if (!peerFarewell_.empty()) return peerFarewell_;
  if (onStandby_ && failure_.empty()) return standby_->peerGoneReason();
  return failure_.empty() ? "the connection broke" : failure_;
}

bool RdmaConnection::drained() const {
  if (onStandby_)
    return !noticeDue_ && movingNext_ == moving_.size() && !standbyAcquired_ &&
           standby_->drained();
  for (const WireState& s : state_)
    if (!s.lost && (s.sendsDone != s.sendsPosted || s.resendNext < s.dataSent))
      return false;
  return !movesPending();
}

}  // namespace mcl::transport::rdma
