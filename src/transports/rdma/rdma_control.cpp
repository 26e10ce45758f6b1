// The control half of RdmaConnection (rdma_connection.h): the counts every
// header carries (credits, acknowledgements, requests to send again),
// control frames, resends, probes, the farewell and a normal close.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "transports/rdma/rdma_connection.h"

namespace mcl::transport::rdma {

namespace {

constexpr size_t kFarewellTextBytes = 248;
// A sender whose acknowledgements stand still while pieces are
// unacknowledged probes after this long, then at twice the interval up to
// the most: long beside a round trip (microseconds) and beside the time a
// busy machine keeps a peer from running, short beside an operation a lost
// frame would stall.
constexpr int64_t kFirstProbeNs = 1'000'000;
constexpr int64_t kMostProbeNs = 20'000'000;
// The clock is read once per this many polls.
constexpr uint32_t kPollsPerClockLook = 16;
// A wire losing more than one frame in this many over a window is lossy;
// a warning says so at most once per kLossWarnNs per connection.
constexpr uint64_t kLossyOneIn = 100;
constexpr int64_t kLossWindowNs = 1'000'000'000;
constexpr int64_t kLossWarnNs = 10'000'000'000;

std::atomic<uint64_t> lossEvents[kLossEvents]{};

int64_t monotonicNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

RdmaLossCounts countsOf(const std::atomic<uint64_t>* events) {
  auto count = [&](LossEvent e) { return events[size_t(e)].load(); };
  return {count(LossEvent::Received), count(LossEvent::Lost),
          count(LossEvent::Duplicate), count(LossEvent::Resent),
          count(LossEvent::Probe)};
}

RdmaLossCounts rdmaLossCounts() { return countsOf(lossEvents); }

void ConnectionSet::count(LossEvent event, uint64_t n) {
  counts_[size_t(event)].fetch_add(n, std::memory_order_relaxed);
  lossEvents[size_t(event)].fetch_add(n, std::memory_order_relaxed);
}

RdmaLossCounts ConnectionSet::counts() const { return countsOf(counts_); }

void RdmaConnection::writeCounts(FrameHeader& h) {
  h.wires = static_cast<uint8_t>(wires_.size());
  h.resend = 0;
  for (uint32_t x = 0; x < wires_.size(); ++x) {
    WireState& s = state_[x];
    h.credits[x] = static_cast<uint16_t>(s.credits);
    s.creditsTold = s.credits;
    s.dataCreditsTold = s.dataCredits;
    h.acked[x] = static_cast<uint16_t>(s.dataReceived);
    if (s.resendWanted) {
      h.resend |= static_cast<uint8_t>(1u << x);
      s.resendWanted = false;
      s.askedResendAt = s.dataReceived;
    }
  }
}

// The peer's counts, from any frame (an old copy's are older and change
// nothing): credits, what it holds, and the wires it wants again.
void RdmaConnection::readCounts(uint32_t wire, const FrameHeader& h) {
  for (uint32_t x = 0; x < wires_.size(); ++x) {
    WireState& s = state_[x];
    s.creditsGranted = widen16(h.credits[x], s.creditsGranted);
    const uint64_t acked = widen16(h.acked[x], s.dataAcked);
    if (acked > s.dataSent)
      fail(wire, "the peer acknowledged piece " + std::to_string(acked) +
                     " of wire " + std::to_string(x) + ", which was not sent");
    ackedTotal_ += acked - s.dataAcked;
    s.dataAcked = acked;
    s.resendNext = std::max(s.resendNext, s.dataAcked);
    if ((h.resend >> x) & 1) s.resendNext = s.dataAcked;
  }
}

bool RdmaConnection::postControl(uint32_t wire, uint8_t flags,
                                 const std::string& text) {
  if (!sendRoom(wire, true)) return false;
  // With a credit to spend, a control frame spends it (its receive is
  // granted back like data's); without, it lands in a spare receive. The
  // two spares then serve only a side whose data filled the window.
  if (creditsLeft(wire) > 0) flags |= kFlagCredited;
  const bool credited = flags & kFlagCredited;
  WireState& s = state_[wire];
  std::byte* frame =
      sendFrame(wire, uint64_t(shape_.depth) + s.controlPosted % kControlSlots);
  auto* h = reinterpret_cast<FrameHeader*>(frame);
  h->seq = kControlFrame;
  h->transmission = credited ? static_cast<uint32_t>(s.transmissions++) : 0;
  h->flags = flags;
  size_t length = 0;
  if (!text.empty()) {
    const size_t room = std::min<size_t>(shape_.frameBytes - kFrameHeaderBytes,
                                         kFarewellTextBytes);
    length = std::min(text.size(), room - 1);
    std::memcpy(frame + kFrameHeaderBytes, text.data(), length);
    frame[kFrameHeaderBytes + length++] = std::byte{0};
  }
  h->bytes = static_cast<uint32_t>(length);
  writeCounts(*h);
  if (flags & kFlagProbe)
    for (WireState& x : state_) x.probedAt = x.dataSent;
  Wire& w = wires_[wire];
  const auto bytes = static_cast<uint32_t>(kFrameHeaderBytes + length);
  w.qp->postSend(kSendTag | kControlTag | s.controlPosted, *w.sendMr, frame,
                 sendLength(bytes, shape_.frameBytes));
  ++s.controlPosted;
  ++s.sendsPosted;
  return true;
}

void RdmaConnection::handleControl(uint32_t wire, uint32_t slot,
                                   const FrameHeader& h) {
  WireState& s = state_[wire];
  if (h.flags & kFlagFarewell) {
    const char* text = reinterpret_cast<const char*>(recvFrame(wire, slot)) +
                       kFrameHeaderBytes;
    if (peerFarewell_.empty())
      peerFarewell_.assign(
          text, strnlen(text, std::min<size_t>(h.bytes, kFarewellTextBytes)));
    if (peerFarewell_.empty()) peerFarewell_ = "it said farewell";
    s.peerSaidFarewell = true;
  }
  if (h.flags & kFlagProbe) {
    answerDue_ = true;
    answerWire_ = wire;
  }
  // The answer to a probe: what the peer holds now. A piece sent before
  // the probe and not acknowledged was lost: the wire goes back to it (what
  // was sent after it arrives twice, and the second copy is dropped). One
  // sent after the probe may still be on its way: not resent for this.
  if (h.flags & kFlagAnswer)
    for (WireState& x : state_)
      if (x.dataAcked < x.probedAt) x.resendNext = x.dataAcked;
  // A credited frame's receive is granted back (not urgently); the others
  // came into a spare receive.
  postReceive(wire, slot,
              (h.flags & kFlagCredited) ? Credit::Control : Credit::None);
}

// Returning credits one frame at a time would double the frames of a
// one-way stream; waiting for a batch can deadlock a ring, where each rank
// holds back the credits its left neighbour waits for. So: a batch of half
// the depth, or sooner when the peer may be running out (its credits, as
// far as this side can tell, are down to half). Uncredited control frames
// go when the peer probed, or when this side lost data and asks for it
// again.
void RdmaConnection::sendControlFrames() {
  const auto depth = uint64_t(shape_.depth);
  const uint64_t granted = depth - kSpareReceives;
  for (uint32_t w = 0; w < wires_.size(); ++w) {
    WireState& s = state_[w];
    const uint64_t owed = s.dataCredits - s.dataCreditsTold;
    const uint64_t peerCredits = granted + s.creditsTold - s.nextTransmission;
    if (owed >= depth / 2 || (owed > 0 && peerCredits <= granted / 2))
      postControl(w, 0, "");
    const bool answer = answerDue_ && answerWire_ == w;
    if ((answer || s.resendWanted) &&
        postControl(w, answer ? kFlagAnswer : 0, "") && answer)
      answerDue_ = false;
  }
}

void RdmaConnection::resend(uint32_t wire) {
  WireState& s = state_[wire];
  const auto depth = uint64_t(shape_.depth);
  // Not while a frame is acquired: its commit counts on the room and the
  // credit it was given.
  while (!acquired_ && s.resendNext < s.dataSent) {
    const uint64_t piece = s.resendNext;
    if (!sendRoom(wire, false) || creditsLeft(wire) == 0 ||
        s.inFlight[piece % depth] != 0)
      return;
    postData(wire, piece);
    ++s.resendNext;
    set_->count(LossEvent::Resent, 1);
  }
}

void RdmaConnection::lookAtClock() {
  if (++pollsSinceClock_ < kPollsPerClockLook) return;
  pollsSinceClock_ = 0;
  const int64_t now = monotonicNs();
  probeIfSilent(now);
  reportLosses(now);
}

// A wire that keeps losing frames works (each loss costs a resend), but
// slower and on borrowed time: said once in a while, naming the cable.
void RdmaConnection::reportLosses(int64_t now) {
  if (lossWindowNs_ == 0) lossWindowNs_ = now;
  if (now - lossWindowNs_ < kLossWindowNs) return;
  for (uint32_t w = 0; w < wires_.size(); ++w) {
    WireState& s = state_[w];
    const bool lossy = s.windowLost * kLossyOneIn > s.windowReceived;
    if (lossy && (lossWarnedNs_ == 0 || now - lossWarnedNs_ >= kLossWarnNs)) {
      lossWarnedNs_ = now;
      MCL_LOG(Warn, kLogColl,
              "rank %d: rdma from rank %d over %s<-%s loses frames: %llu of "
              "%llu (%.2f%%) in the last %.1f s, each sent again: check the "
              "cable (mcl-perf qualify)",
              rank_, peerRank_, wires_[w].device.c_str(),
              wires_[w].remoteDevice.c_str(),
              static_cast<unsigned long long>(s.windowLost),
              static_cast<unsigned long long>(s.windowReceived),
              100.0 * double(s.windowLost) / double(s.windowReceived),
              double(now - lossWindowNs_) / 1e9);
    }
    s.windowLost = s.windowReceived = 0;
  }
  lossWindowNs_ = now;
}

void RdmaConnection::probeIfSilent(int64_t now) {
  int unacked = -1;
  for (uint32_t w = 0; w < wires_.size() && unacked < 0; ++w)
    if (state_[w].dataAcked < state_[w].dataSent) unacked = int(w);
  if (unacked < 0) {
    lastAckNs_ = 0;
    return;
  }
  if (lastAckNs_ == 0 || ackedTotal_ != ackedAtLook_) {
    ackedAtLook_ = ackedTotal_;
    lastAckNs_ = now;
    probeAfterNs_ = kFirstProbeNs;
    return;
  }
  if (now - lastAckNs_ < probeAfterNs_ || now - lastProbeNs_ < probeAfterNs_)
    return;
  if (!postControl(uint32_t(unacked), kFlagProbe, "")) return;
  set_->count(LossEvent::Probe, 1);
  lastProbeNs_ = now;
  probeAfterNs_ = std::min(2 * probeAfterNs_, kMostProbeNs);
}

void RdmaConnection::sayFarewell(const std::string& reason) {
  if (saidFarewell_ || broken_) return;
  saidFarewell_ = true;
  // The spare receives take it; with every send in flight the peer hears
  // nothing on this wire.
  for (uint32_t w = 0; w < wires_.size(); ++w)
    postControl(w, kFlagFarewell, reason.empty() ? "it said farewell" : reason);
}

void RdmaConnection::askForAcknowledgements() {
  if (!broken_ && !saidFarewell_) postControl(0, kFlagProbe, "");
}

bool RdmaConnection::handedOver() const {
  if (broken_) return true;
  for (const WireState& s : state_)
    if (s.peerSaidFarewell) return true;
  for (const WireState& s : state_)
    if (s.dataAcked < s.dataSent) return false;
  return true;
}

void RdmaConnection::service() noexcept {
  try {
    progress();
  } catch (...) {
    // fail() kept the reason; the connection's next use reports it.
  }
}

void RdmaConnection::finish() { set_->finishAll(std::chrono::seconds(1)); }

void ConnectionSet::add(RdmaConnection* c) {
  std::lock_guard<std::mutex> lock(mutex_);
  connections_.push_back(c);
}

void ConnectionSet::remove(RdmaConnection* c) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::erase(connections_, c);
}

void ConnectionSet::serviceAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (RdmaConnection* c : connections_) c->service();
}

void ConnectionSet::finishAll(std::chrono::nanoseconds bound) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  finished_ = true;
  for (RdmaConnection* c : connections_) {
    try {
      c->askForAcknowledgements();
    } catch (...) {
      // A connection that cannot say it has failed: handedOver() says so.
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + bound;
  for (;;) {
    bool all = true;
    for (RdmaConnection* c : connections_) {
      c->service();
      all = all && c->handedOver();
    }
    if (all) return;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  MCL_LOG(Info, kLogInit,
          "rdma: closing with pieces the peers did not acknowledge within "
          "%lld ms (they may hold them and not have said so)",
          static_cast<long long>(bound.count() / 1000000));
}

}  // namespace mcl::transport::rdma
