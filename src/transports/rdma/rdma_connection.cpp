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
  return acquired_ && nextSendSeq_ % wires_.size() == wire ? 1 : 0;
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
  Wire& w = wires_[wire];
  const auto bytes = static_cast<uint32_t>(kFrameHeaderBytes + h->bytes);
  w.qp->postSend(kSendTag | h->seq, *w.sendMr, frame,
                 sendLength(bytes, shape_.frameBytes));
  ++s.inFlight[frameIndex];
  ++s.sendsPosted;
}

std::span<std::byte> RdmaConnection::acquireSend(size_t maxBytes) {
  auto wire = static_cast<uint32_t>(nextSendSeq_ % wires_.size());
  const size_t room =
      std::min<size_t>(maxBytes, shape_.frameBytes - kFrameHeaderBytes);
  std::byte* frame =
      sendFrame(wire, state_[wire].dataSent % uint64_t(shape_.depth));
  // Acquired before and not committed (a caller that found no room on
  // another connection): the same frame, its place and credit kept.
  if (acquired_) return {frame + kFrameHeaderBytes, room};
  auto ready = [&] {
    const WireState& s = state_[wire];
    // Pieces to send again go first; a frame is reused once its piece is
    // acknowledged and its last SEND completed.
    // Data may spend every credit: a credit-returning frame without one
    // goes into a spare receive instead (sendControlFrames).
    return s.resendNext == s.dataSent && sendRoom(wire, false) &&
           creditsLeft(wire) > 0 &&
           s.dataSent - s.dataAcked < uint64_t(shape_.depth) &&
           s.inFlight[s.dataSent % uint64_t(shape_.depth)] == 0;
  };
  if (!ready()) {
    progress();
    if (!ready()) {
      if (creditsLeft(wire) == 0) state_[wire].starved = true;
      return {};
    }
  }
  acquired_ = true;
  return {frame + kFrameHeaderBytes, room};
}

void RdmaConnection::commitSend(size_t bytes) {
  auto wire = static_cast<uint32_t>(nextSendSeq_ % wires_.size());
  WireState& s = state_[wire];
  acquired_ = false;
  auto* h = reinterpret_cast<FrameHeader*>(
      sendFrame(wire, s.dataSent % uint64_t(shape_.depth)));
  h->seq = nextSendSeq_;
  h->bytes = static_cast<uint32_t>(bytes);
  postData(wire, s.dataSent);
  // A go-back that came while the frame was acquired resends it too.
  if (s.resendNext == s.dataSent) ++s.resendNext;
  ++s.dataSent;
  s.starved = false;
  ++nextSendSeq_;
  bytesSent_ += bytes;
}

void RdmaConnection::handleReceive(uint32_t wire, const Completion& c) {
  auto slot = static_cast<uint32_t>(c.wrId);
  if (c.bytes < kFrameHeaderBytes) fail(wire, "a frame without a header");
  const auto& h = *reinterpret_cast<const FrameHeader*>(recvFrame(wire, slot));
  if (h.wires != wires_.size() || h.bytes + kFrameHeaderBytes > c.bytes)
    fail(wire, "a malformed frame (the two ends disagree on the wires)");
  readCounts(wire, h);
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
  if (h.seq % wires_.size() != wire || !(h.flags & kFlagCredited))
    fail(wire, "piece " + std::to_string(h.seq) + " came malformed");
  const uint64_t piece = h.seq / wires_.size();
  if (piece != s.dataReceived) {
    // An old piece sent again, or one after a gap: dropped (go-back-N),
    // and after a gap the sender is asked for the wire's data again, once
    // per gap (a probe covers a request that is lost).
    postReceive(wire, slot, Credit::Data);
    if (piece > s.dataReceived && s.askedResendAt != s.dataReceived)
      s.resendWanted = true;
    return;
  }
  ++s.dataReceived;
  arrived_[h.seq % arrived_.size()] = {true, wire, slot, h.bytes};
}

void RdmaConnection::handleCompletion(uint32_t wire, const Completion& c) {
  if (!c.ok) {
    const uint64_t number = c.wrId & kWrNumberMask;
    fail(wire, (c.recv                 ? "the receive into frame slot "
                : c.wrId & kControlTag ? "the send of control frame "
                                       : "the send of piece ") +
                   std::to_string(number) +
                   " completed with an error: " + c.error);
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
  const uint64_t piece = (c.wrId & kWrNumberMask) / wires_.size();
  --s.inFlight[piece % uint64_t(shape_.depth)];
}

void RdmaConnection::progress() {
  Completion done[16];
  for (uint32_t w = 0; w < wires_.size(); ++w) {
    int n = wires_[w].cq->poll(done, 16);
    for (int i = 0; i < n; ++i) handleCompletion(w, done[i]);
  }
  for (uint32_t w = 0; w < wires_.size(); ++w)
    if (state_[w].resendNext < state_[w].dataSent) resend(w);
  sendControlFrames();
  lookAtClock();
}

std::span<const std::byte> RdmaConnection::peekRecv() {
  Arrived* a = &arrived_[nextRecvSeq_ % arrived_.size()];
  if (!a->present) {
    progress();
    if (!a->present) return {};
  }
  const std::byte* payload = recvFrame(a->wire, a->slot) + kFrameHeaderBytes;
  return {payload + recvOffset_, a->bytes - recvOffset_};
}

void RdmaConnection::releaseRecv(size_t bytes) {
  Arrived& a = arrived_[nextRecvSeq_ % arrived_.size()];
  recvOffset_ += static_cast<uint32_t>(bytes);
  if (recvOffset_ < a.bytes) return;
  a.present = false;
  recvOffset_ = 0;
  ++nextRecvSeq_;
  postReceive(a.wire, a.slot, Credit::Data);
  sendControlFrames();
}

bool RdmaConnection::peerAlive() const {
  if (broken_) return false;
  for (uint32_t w = 0; w < wires_.size(); ++w)
    if (wires_[w].context != nullptr &&
        wires_[w].context->queryPort().state != PortState::Active)
      fail(w, "the port went down (a pulled or failed cable)");
  // Gone once the wire that carries the next piece has said farewell and
  // the piece is not in: nothing comes after a farewell on a wire.
  const auto next = static_cast<uint32_t>(nextRecvSeq_ % wires_.size());
  return !(state_[next].peerSaidFarewell &&
           !arrived_[nextRecvSeq_ % arrived_.size()].present);
}

bool RdmaConnection::peerAcceptsSends() const {
  if (!peerAlive()) return false;
  for (const WireState& s : state_)
    if (s.peerSaidFarewell) return false;
  return true;
}

std::string RdmaConnection::peerGoneReason() const {
  if (!peerFarewell_.empty()) return peerFarewell_;
  return failure_.empty() ? "the connection broke" : failure_;
}

bool RdmaConnection::drained() const {
  for (const WireState& s : state_)
    if (s.sendsDone != s.sendsPosted || s.resendNext < s.dataSent) return false;
  return true;
}

}  // namespace mcl::transport::rdma
