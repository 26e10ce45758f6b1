#include "transports/rdma/rdma_connection.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"

namespace mcl::transport::rdma {

namespace {

constexpr uint64_t kCreditOnly = UINT64_MAX;
constexpr uint64_t kFarewell = UINT64_MAX - 1;  // payload: the reason
constexpr size_t kFarewellTextBytes = 248;
constexpr uint64_t kSendTag = uint64_t{1} << 63;

struct FrameHeader {
  uint64_t seq;                  // piece number, or kCreditOnly
  uint32_t bytes;                // payload bytes
  uint32_t wires;                // how many credit counts follow
  uint32_t reposted[kMaxWires];  // cumulative receives reposted, per wire
};
static_assert(sizeof(FrameHeader) <= kFrameHeaderBytes);

// a is newer than b in wrapping 32-bit counts.
bool newer(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) > 0; }

}  // namespace

RdmaConnection::RdmaConnection(int rank, int peerRank, std::vector<Wire> wires,
                               const FrameShape& shape, std::string link)
    : rank_(rank),
      peerRank_(peerRank),
      wires_(std::move(wires)),
      state_(wires_.size()),
      shape_(shape),
      link_(std::move(link)),
      arrived_(wires_.size() * size_t(shape.depth)) {
  for (uint32_t w = 0; w < wires_.size(); ++w) {
    state_[w].nextRecvSeq = w;
    for (uint32_t slot = 0; slot < uint32_t(shape_.depth); ++slot)
      postReceive(w, slot);
    state_[w].reposted = 0;  // the first receives are the initial credits
  }
}

RdmaConnection::~RdmaConnection() = default;

std::byte* RdmaConnection::sendFrame(uint32_t wire, uint64_t index) {
  return wires_[wire].sendFrames.data() +
         (index % uint64_t(shape_.depth)) * shape_.frameBytes;
}

std::byte* RdmaConnection::recvFrame(uint32_t wire, uint32_t slot) {
  return wires_[wire].recvFrames.data() + size_t(slot) * shape_.frameBytes;
}

size_t usableCapacity(const FrameShape& shape) {
  // One credit is kept for credit-only frames, and a step's pieces never
  // share a frame: two ring steps (each half of this) must fit in depth - 1
  // frames, or a ring of full windows deadlocks. A step forwarded from
  // shared memory or TCP arrives in pieces whose boundaries need not fall
  // on frame boundaries: each costs a frame more, and a step spans at most
  // two such pieces (theirs are 64 KiB and up).
  const size_t framesPerStep =
      std::max<size_t>(1, (size_t(shape.depth) - 1) / 2 - 2);
  return 2 * framesPerStep * (shape.frameBytes - kFrameHeaderBytes);
}

void RdmaConnection::fail(uint32_t wire, const std::string& what) const {
  broken_ = true;
  throw error(mclRemoteError, "rank %d: rdma to rank %d over %s->%s: %s", rank_,
              peerRank_, wires_[wire].device.c_str(),
              wires_[wire].remoteDevice.c_str(), what.c_str());
}

void RdmaConnection::postReceive(uint32_t wire, uint32_t slot) {
  Wire& w = wires_[wire];
  w.qp->postRecv(slot, *w.recvMr, recvFrame(wire, slot), shape_.frameBytes);
  ++state_[wire].reposted;
}

uint32_t RdmaConnection::creditsLeft(uint32_t wire) const {
  const WireState& s = state_[wire];
  return uint32_t(shape_.depth) + s.creditsGranted - s.framesSent;
}

void RdmaConnection::writeCredits(std::byte* frame) {
  auto* h = reinterpret_cast<FrameHeader*>(frame);
  h->wires = static_cast<uint32_t>(wires_.size());
  for (uint32_t w = 0; w < wires_.size(); ++w) {
    h->reposted[w] = state_[w].reposted;
    state_[w].repostedTold = state_[w].reposted;
    state_[w].dataRepostedTold = state_[w].dataReposted;
  }
}

void RdmaConnection::post(uint32_t wire, uint64_t seq, uint32_t payload) {
  WireState& s = state_[wire];
  std::byte* frame = sendFrame(wire, s.sendsPosted);
  auto* h = reinterpret_cast<FrameHeader*>(frame);
  h->seq = seq;
  h->bytes = payload;
  writeCredits(frame);
  Wire& w = wires_[wire];
  w.qp->postSend(kSendTag | s.sendsPosted, *w.sendMr, frame,
                 static_cast<uint32_t>(kFrameHeaderBytes + payload));
  ++s.sendsPosted;
  ++s.framesSent;
}

std::span<std::byte> RdmaConnection::acquireSend(size_t maxBytes) {
  auto wire = static_cast<uint32_t>(nextSendSeq_ % wires_.size());
  auto ready = [&] {
    const WireState& s = state_[wire];
    // One credit stays for credit-only frames, so returning credits can
    // never be blocked by data.
    return s.sendsPosted - s.sendsDone < uint64_t(shape_.depth) &&
           creditsLeft(wire) > 1;
  };
  if (!ready()) {
    progress();
    if (!ready()) return {};
  }
  acquired_ = true;
  size_t room =
      std::min<size_t>(maxBytes, shape_.frameBytes - kFrameHeaderBytes);
  return {sendFrame(wire, state_[wire].sendsPosted) + kFrameHeaderBytes, room};
}

void RdmaConnection::commitSend(size_t bytes) {
  auto wire = static_cast<uint32_t>(nextSendSeq_ % wires_.size());
  acquired_ = false;
  post(wire, nextSendSeq_, static_cast<uint32_t>(bytes));
  ++nextSendSeq_;
  bytesSent_ += bytes;
}

void RdmaConnection::handleReceive(uint32_t wire, const Completion& c) {
  auto slot = static_cast<uint32_t>(c.wrId);
  if (c.bytes < kFrameHeaderBytes) fail(wire, "a frame without a header");
  const auto* h = reinterpret_cast<const FrameHeader*>(recvFrame(wire, slot));
  ++state_[wire].framesReceived;
  if (h->wires != wires_.size() || h->bytes + kFrameHeaderBytes > c.bytes)
    fail(wire, "a malformed frame (the two ends disagree on the wires)");
  for (uint32_t w = 0; w < wires_.size(); ++w)
    if (newer(h->reposted[w], state_[w].creditsGranted))
      state_[w].creditsGranted = h->reposted[w];
  if (h->seq == kCreditOnly) {
    postReceive(wire, slot);
    return;
  }
  if (h->seq == kFarewell) {
    const char* text = reinterpret_cast<const char*>(recvFrame(wire, slot)) +
                       kFrameHeaderBytes;
    if (peerFarewell_.empty())
      peerFarewell_.assign(
          text, strnlen(text, std::min<size_t>(h->bytes, kFarewellTextBytes)));
    if (peerFarewell_.empty()) peerFarewell_ = "it said farewell";
    state_[wire].peerSaidFarewell = true;
    postReceive(wire, slot);
    return;
  }
  // Every piece holds bytes (Connection::commitSend): an empty one would
  // never be read, and the stream would stall behind it until the timeout.
  if (h->bytes == 0) fail(wire, "a data frame without data");
  WireState& s = state_[wire];
  if (h->seq != s.nextRecvSeq)
    fail(wire, "frame " + std::to_string(s.nextRecvSeq) + " was lost (frame " +
                   std::to_string(h->seq) + " came next): the link dropped it");
  s.nextRecvSeq += wires_.size();
  Arrived& a = arrived_[h->seq % arrived_.size()];
  a = {true, wire, slot, h->bytes};
}

void RdmaConnection::progress() {
  Completion done[16];
  for (uint32_t w = 0; w < wires_.size(); ++w) {
    int n = wires_[w].cq->poll(done, 16);
    for (int i = 0; i < n; ++i) {
      const Completion& c = done[i];
      if (!c.ok)
        fail(w, std::string(c.recv ? "a receive" : "a send") +
                    " failed: " + c.error);
      if (c.recv) {
        handleReceive(w, c);
      } else {
        ++state_[w].sendsDone;
      }
    }
  }
  maybeReturnCredits();
}

// Returning credits one frame at a time would double the frames of a
// one-way stream; waiting for a batch can deadlock a ring, where each rank
// holds back the credits its left neighbour waits for. So: a batch of half
// the depth, or sooner when the peer may be running out (its credits, as
// far as this side can tell, are down to half). Only reposts after data
// frames count, so two idle ends never trade credit-only frames forever.
void RdmaConnection::maybeReturnCredits() {
  const auto depth = uint32_t(shape_.depth);
  for (uint32_t w = 0; w < wires_.size(); ++w) {
    WireState& s = state_[w];
    uint32_t owed = s.dataReposted - s.dataRepostedTold;
    uint32_t peerCredits = depth + s.repostedTold - s.framesReceived;
    bool due = owed >= depth / 2 || (owed > 0 && peerCredits <= depth / 2);
    if (!due || creditsLeft(w) < 1 ||
        s.sendsPosted - s.sendsDone >= uint64_t(shape_.depth) || acquired_)
      continue;
    post(w, kCreditOnly, 0);
  }
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
  postReceive(a.wire, a.slot);
  ++state_[a.wire].dataReposted;
  maybeReturnCredits();
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
  return peerFarewell_.empty() ? "the connection broke" : peerFarewell_;
}

void RdmaConnection::sayFarewell(const std::string& reason) {
  if (saidFarewell_ || broken_ || acquired_) return;
  saidFarewell_ = true;
  const size_t room = std::min<size_t>(shape_.frameBytes - kFrameHeaderBytes,
                                       kFarewellTextBytes);
  const size_t length = std::min(reason.size(), room - 1);
  for (uint32_t w = 0; w < wires_.size(); ++w) {
    // The credit kept for credit-only frames serves; without one (or with
    // every send in flight) the peer hears nothing on this wire.
    const WireState& s = state_[w];
    if (creditsLeft(w) < 1 ||
        s.sendsPosted - s.sendsDone >= uint64_t(shape_.depth))
      continue;
    std::byte* payload = sendFrame(w, s.sendsPosted) + kFrameHeaderBytes;
    memcpy(payload, reason.data(), length);
    payload[length] = std::byte{0};
    post(w, kFarewell, static_cast<uint32_t>(length + 1));
  }
}

bool RdmaConnection::drained() const {
  for (const WireState& s : state_)
    if (s.sendsDone != s.sendsPosted) return false;
  return true;
}

}  // namespace mcl::transport::rdma
