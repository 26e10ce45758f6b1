// The control half of RdmaConnection (rdma_connection.h): the counts every
// header carries (credits, acknowledgements, requests to send again),
// control frames, resends, probes, the farewell and a normal close.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
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
// Where a peer has several wires, each one's port is asked this often (and
// at every peerAlive(), as with one wire): a pulled cable on UC gives no
// error, only silence, and ibverbs' query walks the port's GID table.
constexpr int64_t kPortCheckNs = 20'000'000;
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
  return {count(LossEvent::Received),  count(LossEvent::Lost),
          count(LossEvent::Duplicate), count(LossEvent::Resent),
          count(LossEvent::Probe),     count(LossEvent::BeyondSpares),
          count(LossEvent::WireLost),  count(LossEvent::PieceMoved)};
}

RdmaLossCounts rdmaLossCounts() { return countsOf(lossEvents); }

void ConnectionSet::count(LossEvent event, uint64_t n) {
  counts_[size_t(event)].fetch_add(n, std::memory_order_relaxed);
  lossEvents[size_t(event)].fetch_add(n, std::memory_order_relaxed);
}

RdmaLossCounts ConnectionSet::counts() const { return countsOf(counts_); }

void RdmaConnection::writeCounts(uint32_t wire, FrameHeader& h) {
  h.wires = static_cast<uint8_t>(wires_.size());
  h.resend = 0;
  h.before = static_cast<uint32_t>(state_[wire].transmissions);
  h.uncreditedSeen = state_[wire].uncreditedReceived;
  h.lost = lostBits_;
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
// nothing): credits, what it holds, and the uncredited frames of this wire
// it received.
void RdmaConnection::readCounts(uint32_t wire, const FrameHeader& h) {
  WireState& own = state_[wire];
  const auto echoed =
      static_cast<int8_t>(h.uncreditedSeen - own.uncreditedEchoed);
  const auto sent =
      static_cast<int8_t>(own.uncreditedSent - own.uncreditedEchoed);
  if (echoed > 0)
    own.uncreditedEchoed += static_cast<uint8_t>(std::min(echoed, sent));
  const auto confirmed =
      static_cast<int8_t>(h.uncreditedSeen - own.uncreditedConfirmed);
  const auto unconfirmed =
      static_cast<int8_t>(own.uncreditedSent - own.uncreditedConfirmed);
  if (confirmed > 0)
    own.uncreditedConfirmed +=
        static_cast<uint8_t>(std::min(confirmed, unconfirmed));
  for (uint32_t x = 0; x < wires_.size(); ++x) {
    WireState& s = state_[x];
    const uint64_t granted = widen16(h.credits[x], s.creditsGranted);
    grantedTotal_ += granted - s.creditsGranted;
    s.creditsGranted = granted;
    const uint64_t acked = widen16(h.acked[x], s.dataAcked);
    if (acked > s.dataSent)
      fail(wire, "the peer acknowledged piece " + std::to_string(acked) +
                     " of wire " + std::to_string(x) + ", which was not sent");
    ackedTotal_ += acked - s.dataAcked;
    s.dataAcked = acked;
    s.resendNext = std::max(s.resendNext, s.dataAcked);
  }
  // Wires the peer gave up: this end stops using them too. Where the two
  // ends gave up every wire between them (each its own, at once), none is
  // left that both use.
  if (h.lost != 0 && (h.lost | lostBits_) == (1u << wires_.size()) - 1 &&
      (h.lost & ~lostBits_) != 0) {
    auto named = [&](unsigned bits) {
      std::string names;
      for (uint32_t x = 0; x < wires_.size(); ++x)
        if ((bits >> x) & 1)
          names += (names.empty() ? "" : " + ") + wires_[x].device + "->" +
                   wires_[x].remoteDevice;
      return names;
    };
    const std::string why =
        "no cable is left that both ends use: this "
        "end gave up " +
        named(lostBits_) + ", rank " + std::to_string(peerRank_) + " gave up " +
        named(h.lost & ~lostBits_);
    if (!hasStandby()) fail(wire, why);
    enterStandby(why);
    return;
  }
  for (uint32_t x = 0; h.lost != 0 && x < wires_.size(); ++x)
    if (((h.lost >> x) & 1) && !state_[x].lost)
      loseWire(x, "rank " + std::to_string(peerRank_) + " gave it up");
}

// Transmissions on `wire` before `before` that did not arrive were lost (a
// queue pair delivers in order): their credits come back.
void RdmaConnection::catchUp(uint32_t wire, uint32_t before) {
  WireState& s = state_[wire];
  const auto ahead =
      static_cast<int32_t>(before - static_cast<uint32_t>(s.nextTransmission));
  if (ahead <= 0) return;
  const auto lost = uint64_t(ahead);
  set_->count(LossEvent::Lost, lost);
  set_->count(LossEvent::Received, lost);
  s.windowLost += lost;
  s.windowReceived += lost;
  s.credits += lost;
  s.dataCredits += lost;
  s.nextTransmission += lost;
}

// The wires the peer wants again from what it acknowledged: from a fresh
// frame only (a duplicate's request was served when the original came).
void RdmaConnection::applyResendRequests(const FrameHeader& h) {
  if (h.resend == 0) return;
  for (uint32_t x = 0; x < wires_.size(); ++x)
    if ((h.resend >> x) & 1) state_[x].resendNext = state_[x].dataAcked;
}

bool RdmaConnection::quiet() const {
  if (onStandby_) return true;  // TCP answers for itself
  if (answerDue_) return false;
  for (const WireState& s : state_)
    if (!s.lost && s.sendsDone != s.sendsPosted) return false;
  return true;
}

bool RdmaConnection::postControl(uint32_t wire, uint8_t flags,
                                 const std::string& text) {
  if (!sendRoom(wire, true)) return false;
  WireState& s = state_[wire];
  // With a credit to spend, a control frame spends it (its receive is
  // granted back like data's); without, it lands in a spare receive. The
  // two spares then serve only a side whose data filled the window, and
  // only as many at a time as there are: a probe, its answer and a
  // farewell may go beyond (rare; a probe or an answer lost for it is
  // asked for again, a farewell is best effort).
  if (creditsLeft(wire) > reservedFor(wire)) flags |= kFlagCredited;
  const bool credited = flags & kFlagCredited;
  const bool mustGo = flags & (kFlagProbe | kFlagAnswer | kFlagFarewell);
  if (!credited && !mustGo &&
      uint8_t(s.uncreditedSent - s.uncreditedEchoed) >= kSpareReceives)
    return false;
  std::byte* frame =
      sendFrame(wire, uint64_t(shape_.depth) + s.controlPosted % kControlSlots);
  auto* h = reinterpret_cast<FrameHeader*>(frame);
  h->seq = kControlFrame;
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
  writeCounts(wire, *h);
  h->transmission = credited ? static_cast<uint32_t>(s.transmissions++) : 0;
  if (!credited &&
      uint8_t(s.uncreditedSent - s.uncreditedConfirmed) >= kSpareReceives)
    set_->count(LossEvent::BeyondSpares, 1);
  if (!credited) ++s.uncreditedSent;
  if (flags & kFlagProbe) s.probedAt = s.dataSent;
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
    answerWire_ = state_[wire].lost ? left_.front() : wire;
  }
  // The answer to this wire's probe: what the peer holds now. A piece sent
  // on this wire before the probe and not acknowledged was lost (the wire
  // delivers in order): the wire goes back to it. One sent after the probe
  // may still be on its way: not resent for this. (Other wires' pieces
  // keep no order with this one: their own probes answer for them.)
  if ((h.flags & kFlagAnswer) && s.dataAcked < s.probedAt)
    s.resendNext = s.dataAcked;
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
    if (s.lost) continue;
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
  // Leaving a frame acquired and not committed its place and its credit.
  while (s.resendNext < s.dataSent) {
    const uint64_t piece = s.resendNext;
    if (!sendRoom(wire, false) || creditsLeft(wire) <= reservedFor(wire) ||
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
  // One wire's port matters too where a standby can take over from it.
  if ((wires_.size() > 1 || hasStandby()) &&
      now - portsCheckedNs_ >= kPortCheckNs) {
    portsCheckedNs_ = now;
    checkPorts();
  }
  watchStandby(now);
  if (wires_.size() > 1) watchSilence(now);
  probeIfSilent(now);
  reportLosses(now);
  // Spare receives the peer never said it received were lost with their
  // frames (or it stopped polling): after a while the budget comes back.
  for (WireState& s : state_) {
    if (uint8_t(s.uncreditedSent - s.uncreditedEchoed) < kSpareReceives) {
      s.spareFullSinceNs = 0;
    } else if (s.spareFullSinceNs == 0) {
      s.spareFullSinceNs = now;
    } else if (now - s.spareFullSinceNs >= kFirstProbeNs) {
      s.uncreditedEchoed = s.uncreditedSent;
      s.spareFullSinceNs = 0;
    }
  }
}

// A wire that keeps losing frames works (each loss costs a resend), but
// slower and on borrowed time: said once in a while, naming the cable.
void RdmaConnection::reportLosses(int64_t now) {
  if (lossWindowNs_ == 0) lossWindowNs_ = now;
  if (now - lossWindowNs_ < kLossWindowNs) return;
  for (uint32_t w = 0; w < wires_.size(); ++w) {
    WireState& s = state_[w];
    const bool lossy = !s.lost && s.windowLost * kLossyOneIn > s.windowReceived;
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

bool RdmaConnection::needsProbe(uint32_t wire) const {
  const WireState& s = state_[wire];
  if (s.peerSaidFarewell || s.lost) return false;  // it answers no more
  return s.dataAcked < s.dataSent ||
         (creditsLeft(wire) == 0 && (s.starved || s.resendNext < s.dataSent));
}

void RdmaConnection::probeIfSilent(int64_t now) {
  bool any = false;
  for (uint32_t w = 0; w < wires_.size(); ++w) any = any || needsProbe(w);
  if (!any) {
    lastAckNs_ = 0;
    return;
  }
  const uint64_t mark = ackedTotal_ + grantedTotal_;
  if (lastAckNs_ == 0 || mark != ackedAtLook_) {
    ackedAtLook_ = mark;
    lastAckNs_ = now;
    probeAfterNs_ = kFirstProbeNs;
    return;
  }
  if (now - lastAckNs_ < probeAfterNs_ || now - lastProbeNs_ < probeAfterNs_)
    return;
  bool probed = false;
  for (uint32_t w = 0; w < wires_.size(); ++w)
    if (needsProbe(w) && postControl(w, kFlagProbe, "")) {
      set_->count(LossEvent::Probe, 1);
      probed = true;
    }
  if (!probed) return;
  lastProbeNs_ = now;
  probeAfterNs_ = std::min(2 * probeAfterNs_, kMostProbeNs);
}

void RdmaConnection::sayFarewell(const std::string& reason) {
  if (saidFarewell_) return;
  if (hasStandby() || onStandby_) standby_->sayFarewell(reason);
  if (broken_) return;
  saidFarewell_ = true;
  if (onStandby_) return;
  // The spare receives take it; with every send in flight the peer hears
  // nothing on this wire.
  for (uint32_t w = 0; w < wires_.size(); ++w)
    if (!state_[w].lost)
      postControl(w, kFlagFarewell,
                  reason.empty() ? "it said farewell" : reason);
}

void RdmaConnection::askForAcknowledgements() {
  if (broken_ || saidFarewell_ || onStandby_) return;
  bool asked = false;
  for (uint32_t w = 0; w < wires_.size(); ++w)
    if (!state_[w].lost && state_[w].dataAcked < state_[w].dataSent)
      asked = postControl(w, kFlagProbe, "") || asked;
  // Nothing unacknowledged here: one probe still tells the peer what
  // arrived, which it may wait for.
  if (!asked) postControl(left_.empty() ? 0 : left_.front(), kFlagProbe, "");
}

bool RdmaConnection::handedOver() const {
  if (broken_) return true;
  if (onStandby_) return drained() || !standby_->peerAcceptsSends();
  for (const WireState& s : state_)
    if (!s.lost && s.peerSaidFarewell) return true;
  for (const WireState& s : state_)
    if (!s.lost && s.dataAcked < s.dataSent) return false;
  return !movesPending();
}

bool RdmaConnection::service() noexcept {
  // Services come far apart beside polls: each reads the clock.
  pollsSinceClock_ = kPollsPerClockLook - 1;
  try {
    progress();
  } catch (const std::exception& e) {
    // fail() kept the reason; the connection's next use reports it. The
    // standby's own failure is kept here too (it keeps its own reason).
    if (onStandby_ && !broken_) {
      broken_ = true;
      failure_ = "rank " + std::to_string(rank_) + ": rdma to rank " +
                 std::to_string(peerRank_) +
                 ", carried on over its standby: " + e.what();
    }
  } catch (...) {
    // Nothing else is thrown here; noexcept must not end the process.
  }
  if (broken_) return false;
  if (onStandby_) return !drained();
  if (!quiet()) return true;
  for (uint32_t w = 0; w < wires_.size(); ++w)
    if (!state_[w].lost &&
        (needsProbe(w) || state_[w].resendNext < state_[w].dataSent))
      return true;
  return movesPending();
}

void RdmaConnection::finish() {
  // The set's wait also sends what is still to move onto the standby
  // (service()); then the standby hands its own pieces over.
  set_->finishAll(std::chrono::seconds(1));
  if (onStandby_ && !broken_) standby_->finish();
}

namespace {

// Every ConnectionSet of the process, for serviceOthers.
std::mutex registryMutex;
std::vector<ConnectionSet*>& registry() {
  static std::vector<ConnectionSet*> sets;
  return sets;
}

}  // namespace

ConnectionSet::ConnectionSet() {
  std::lock_guard<std::mutex> lock(registryMutex);
  registry().push_back(this);
}

ConnectionSet::~ConnectionSet() {
  {
    std::lock_guard<std::mutex> lock(keeperMutex_);
    keeperStops_ = true;
  }
  keeperWake_.notify_all();
  if (keeper_.joinable()) keeper_.join();
  std::lock_guard<std::mutex> lock(registryMutex);
  std::erase(registry(), this);
}

void ConnectionSet::keepServiced() {
  std::lock_guard<std::mutex> lock(keeperMutex_);
  if (!keeper_.joinable()) keeper_ = std::thread([this] { keep(); });
}

void ConnectionSet::keep() {
  int64_t intervalNs = kFirstProbeNs;
  std::unique_lock<std::mutex> lock(keeperMutex_);
  while (!keeperWake_.wait_for(lock, std::chrono::nanoseconds(intervalNs),
                               [this] { return keeperStops_; })) {
    lock.unlock();
    // A thread that uses the set services it itself (its polls, its naps).
    bool recovering = true;
    if (use_.try_lock()) {
      recovering = serviceAll();
      use_.unlock();
    }
    intervalNs =
        recovering ? kFirstProbeNs : std::min(2 * intervalNs, kMostProbeNs);
    lock.lock();
  }
}

void ConnectionSet::serviceOthers() {
  // The registry's lock is held throughout, so no set is destroyed while
  // it is serviced; a set in use by its own thread is left to it.
  std::lock_guard<std::mutex> lock(registryMutex);
  for (ConnectionSet* other : registry()) {
    if (other == this || !other->use_.try_lock()) continue;
    other->serviceAll();
    other->use_.unlock();
  }
}

void ConnectionSet::add(RdmaConnection* c) {
  std::lock_guard<std::mutex> lock(mutex_);
  connections_.push_back(c);
}

void ConnectionSet::remove(RdmaConnection* c) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::erase(connections_, c);
}

bool ConnectionSet::firstTime(const std::string& what) {
  // Under use_ or serviceAll's mutex_ already: a lock of its own.
  std::lock_guard<std::mutex> lock(saidMutex_);
  if (std::find(said_.begin(), said_.end(), what) != said_.end()) return false;
  said_.push_back(what);
  return true;
}

bool ConnectionSet::serviceAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  bool recovering = false;
  for (RdmaConnection* c : connections_)
    recovering = c->service() || recovering;
  return recovering;
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
      // Its answers to the peer's probes must have left too: the queue
      // pair is destroyed next.
      all = all && c->handedOver() && c->quiet();
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
