// TcpConnection's lanes and their moves (tcp_connection.h): which socket
// carries which pieces, giving a lost socket up (failOver: its lanes move
// to the sockets that remain, from the first piece the peer's kernel may
// not hold whole), taking a move in at the far end, and the slots a piece
// keeps until the peer's kernel acknowledged it.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/log.h"
#include "platform/tcp_progress.h"
#include "transports/tcp/piece_seal.h"
#include "transports/tcp/tcp_connection.h"

namespace mcl::transport::tcp {

void TcpConnection::followLinkStates(
    std::vector<std::shared_ptr<const std::atomic<bool>>> down) {
  for (size_t i = 0; i < stripes_.size() && i < down.size(); ++i) {
    stripes_[i].linkDown = std::move(down[i]);
    // Where the system cannot say what was acknowledged, nothing moves:
    // no look at every progress.
    if (stripes_[i].linkDown && ackKnown_) {
      linkDown_.resize(stripes_.size(), nullptr);
      linkDown_[i] = stripes_[i].linkDown.get();
    }
  }
}

std::string TcpConnection::stripeLink(size_t i) const {
  return i < stripeLinks_.size() ? stripeLinks_[i]
                                 : "socket " + std::to_string(i);
}

uint64_t TcpConnection::nextPiece(const std::vector<Lane>& lanes,
                                  uint64_t limit) {
  uint64_t next = kNoPiece;
  for (const Lane& l : lanes)
    if (l.next < l.end) next = std::min(next, l.next);
  return next < limit ? next : kNoPiece;
}

void TcpConnection::advance(std::vector<Lane>& lanes, uint64_t piece,
                            uint64_t* cursor, uint64_t limit) const {
  const auto stride = static_cast<uint64_t>(residues_);
  if (lanes.size() == 1 && lanes[0].end == kNoPiece && limit == kNoPiece) {
    lanes[0].next += stride;  // no lane ever moved here or away
    *cursor = lanes[0].next;
    return;
  }
  for (Lane& l : lanes)
    if (l.next == piece) l.next += stride;
  std::erase_if(lanes, [](const Lane& l) { return l.next >= l.end; });
  *cursor = nextPiece(lanes, limit);
}

size_t TcpConnection::recvOwner(uint64_t piece) const {
  const auto stride = static_cast<uint64_t>(residues_);
  if (!moved_) return piece % stride;
  for (size_t i = 0; i < stripes_.size(); ++i)
    for (const Lane& l : stripes_[i].recvLanes)
      if (l.start % stride == piece % stride && l.start <= piece &&
          piece < l.end)
        return i;
  return piece % stride;
}

void TcpConnection::watchLinks() {
  for (size_t i = 0; i < linkDown_.size(); ++i)
    if (linkDown_[i] != nullptr &&
        linkDown_[i]->load(std::memory_order_relaxed) && !stripes_[i].sendLost)
      failOver(i, "its link went down");
}

bool TcpConnection::failOver(size_t lostIndex, const std::string& why) {
  Stripe& lost = stripes_[lostIndex];
  if (lost.sendLost) return true;
  if (!ackKnown_ || saidFarewell_ || broken_) return false;
  const std::vector<size_t> live = takersFor(lostIndex);
  uint64_t cut = 0;
  if (live.empty() || !measureCut(lost, &cut)) return false;
  std::vector<uint64_t> taken;
  const uint64_t again = takeBack(lostIndex, cut, &taken);
  std::vector<Lane> lanes = lost.sendLanes;
  lanes.insert(lanes.end(), lost.lanesAfterControl.begin(),
               lost.lanesAfterControl.end());
  // A lane that went back to its own socket (moveLaneHome) leaves no lane
  // here once its last piece is written: its pieces past the cut still go
  // again, as a lane that ends where the socket taken back took over.
  const auto laneStride = static_cast<uint64_t>(residues_);
  for (uint64_t p : taken) {  // in piece order
    Lane* run = nullptr;
    bool covered = false;
    for (Lane& l : lanes) {
      if (l.start % laneStride != p % laneStride) continue;
      if (l.start <= p && p < l.end) covered = true;
      if (l.end == p) run = &l;  // a run made here: it grows
    }
    if (covered) continue;
    if (run != nullptr) {
      run->next = run->end = p + laneStride;
    } else {
      lanes.push_back({p, p + laneStride, p + laneStride});
    }
  }
  lost.sendLost = true;
  homeDue_ &= ~(uint64_t{1} << lostIndex);  // taken in, lost again
  givenUp_.fetch_or(uint64_t{1} << lostIndex, std::memory_order_relaxed);
  lost.sendLanes.clear();
  lost.lanesAfterControl.clear();
  lost.control.clear();
  lost.controlEnds.clear();
  lost.controlAt = 0;
  lost.sendOffset = 0;
  lost.sendSealed = false;
  lost.sendPiece = kNoPiece;
  moved_ = true;
  const auto stride = static_cast<uint64_t>(residues_);
  std::string over;
  for (size_t turn = 0; turn < lanes.size(); ++turn) {
    const Lane& l = lanes[turn];
    const uint64_t residue = l.start % stride;
    // The lane's first piece that goes again (written past the cut), else
    // its next one. Those before it are in the peer's kernel.
    uint64_t from = l.next;
    for (uint64_t p = std::max(l.start, sendReleased_); p < l.next; ++p)
      if (p % stride == residue && sendWritten_[p % shape_.slots] == 0) {
        from = p;
        break;
      }
    const size_t toIndex = live[(nextSurvivor_ + turn) % live.size()];
    queueMove(toIndex, residue, from, cut, lostIndex, l.end);
    if (over.find(stripeLink(toIndex)) == std::string::npos)
      over += (over.empty() ? "" : ", ") + stripeLink(toIndex);
  }
  nextSurvivor_ += lanes.size();
  socketsLost_.fetch_add(1, std::memory_order_relaxed);
  bytesMoved_.fetch_add(again, std::memory_order_relaxed);
  sayGivenUp(lostIndex, why, over, again);
  return true;
}

bool TcpConnection::measureCut(Stripe& lost, uint64_t* cut) {
  uint64_t unacked = 0;
  if (!platform::bytesNotAcknowledged(lost.socket.fd(), &unacked)) return false;
  lost.acked = lost.bytesOut - std::min(unacked, lost.bytesOut);
  // The stream's end at the far side: its last frame acknowledged whole.
  *cut = lost.ackedFrameEnd;
  for (uint64_t end : lost.frameEnds)
    if (end <= lost.acked) *cut = std::max(*cut, end);
  const uint64_t controlBase = lost.bytesOut - lost.controlAt;
  for (size_t end : lost.controlEnds)
    if (end <= lost.controlAt && controlBase + end <= lost.acked)
      *cut = std::max(*cut, controlBase + end);
  return true;
}

uint64_t TcpConnection::takeBack(size_t lostIndex, uint64_t cut,
                                 std::vector<uint64_t>* taken) {
  Stripe& lost = stripes_[lostIndex];
  auto plain = [&](uint64_t p, const PieceTag& sealedTag) {
    // Encrypted in place under the lost socket's keys: back to plain, to
    // be sealed again under the keys of the socket it goes on.
    const size_t slot = p % shape_.slots;
    if (sendCipher_[slot] != lostIndex + 1) return;
    const PieceHeader header{sendLength_[slot], static_cast<uint32_t>(p)};
    if (!lost.seal->unseal(p, &header, sendSlot(p), sendLength_[slot],
                           sealedTag))
      fail("a piece to send again could not be taken back out of its seal", 0);
    sendCipher_[slot] = 0;
  };
  // Every piece it carried past the cut goes again: in each lane, a run to
  // the lane's end (a lane's pieces go out in order).
  uint64_t again = 0;
  for (uint64_t p = sendReleased_; p < sendCommitted_; ++p) {
    const size_t slot = p % shape_.slots;
    if (sendWritten_[slot] == 0 || sendStripe_[slot] != lostIndex ||
        sendEnd_[slot] <= cut)
      continue;
    plain(p, sendTags_[slot]);
    sendWritten_[slot] = 0;
    taken->push_back(p);
    sendFlushed_ = std::min(sendFlushed_, p);
    again += sendLength_[slot];
  }
  // The piece it was in the middle of (or had sealed, about to go).
  if (lost.sendSealed && lost.sendPiece < sendCommitted_)
    plain(lost.sendPiece, lost.sendTag);
  return again + lost.sendOffset;
}

void TcpConnection::queueMove(size_t toIndex, uint64_t residue, uint64_t from,
                              uint64_t cut, size_t lostIndex, uint64_t end) {
  Stripe& to = stripes_[toIndex];
  const PieceHeader header{kMoveLength, static_cast<uint32_t>(residue)};
  std::array<std::byte, kMoveBytes> body{};
  const auto lostWord = static_cast<uint32_t>(lostIndex);
  memcpy(body.data(), &from, 8);
  memcpy(body.data() + 8, &cut, 8);
  memcpy(body.data() + 16, &end, 8);
  memcpy(body.data() + 24, &lostWord, 4);
  PieceTag sealedTag{};
  if (to.seal)
    sealedTag = to.seal->seal(to.movesOut, SealedFrame::Move, &header,
                              body.data(), body.data(), kMoveBytes);
  ++to.movesOut;
  const auto* h = reinterpret_cast<const std::byte*>(&header);
  to.control.insert(to.control.end(), h, h + sizeof(header));
  to.control.insert(to.control.end(), body.begin(), body.end());
  const auto* t = reinterpret_cast<const std::byte*>(sealedTag.data());
  to.control.insert(to.control.end(), t, t + tagBytes(to));
  to.controlEnds.push_back(to.control.size());
  // A lane leaving the socket it is written on brings nothing here.
  if (toIndex != lostIndex) to.lanesAfterControl.push_back({from, from, end});
}

void TcpConnection::sayGivenUp(size_t lostIndex, const std::string& why,
                               const std::string& over, uint64_t again) const {
  // Said once per link: its sockets go together.
  std::vector<std::string> links;
  std::vector<std::string> left;
  for (size_t i = 0; i < stripes_.size(); ++i) {
    if (i != lostIndex && stripes_[i].sendLost &&
        stripeLink(i) == stripeLink(lostIndex))
      return;
    if (i >= residues_) continue;  // the standby: not one of the cables
    if (std::find(links.begin(), links.end(), stripeLink(i)) == links.end())
      links.push_back(stripeLink(i));
    if (!stripes_[i].sendLost && stripeLink(i) != stripeLink(lostIndex) &&
        std::find(left.begin(), left.end(), stripeLink(i)) == left.end())
      left.push_back(stripeLink(i));
  }
  if (hasStandby() && over == stripeLink(standbyIndex())) {
    const Stripe& standby = stripes_[standbyIndex()];
    const std::string data =
        !standby.seal ? "in the clear"
        : standby.seal->mode() == WireProtect::Mac
            ? "authenticated"
            : std::string("encrypted, ") + pieceCipherName(cipher_);
    MCL_LOG(Warn, kLogInit,
            "tcp to rank %d: %s is given up (%s), and no cable to rank %d is "
            "left: what it carried goes on over %s, the path init would "
            "choose without the cables (data %s), until a cable is taken "
            "back; pieces the peer may not hold whole are sent again (%llu "
            "bytes)",
            peerRank_, stripeLink(lostIndex).c_str(), why.c_str(), peerRank_,
            over.c_str(), data.c_str(), static_cast<unsigned long long>(again));
    return;
  }
  MCL_LOG(Warn, kLogInit,
          "tcp to rank %d: %s is given up (%s): what it carried goes on over "
          "%s, %zu of %zu links left; pieces the peer may not hold whole are "
          "sent again (%llu bytes)",
          peerRank_, stripeLink(lostIndex).c_str(), why.c_str(), over.c_str(),
          left.size(), links.size(), static_cast<unsigned long long>(again));
}

bool TcpConnection::takeMove(Stripe& s, size_t index) {
  const auto stride = static_cast<uint64_t>(residues_);
  // Moves are numbered on each socket, both ends alike: the nonce.
  if (!s.moveWaits && s.seal &&
      !s.seal->open(s.movesIn, SealedFrame::Move, &s.recvHeader,
                    s.moveBody.data(), kMoveBytes, s.recvTag))
    fail(
        "integrity check failed: a move of a lost socket's pieces was "
        "altered on the way",
        0);
  if (!s.moveWaits) ++s.movesIn;
  uint64_t from = 0;
  uint64_t cut = 0;
  uint64_t end = 0;
  uint32_t lostIndex = 0;
  memcpy(&from, s.moveBody.data(), 8);
  memcpy(&cut, s.moveBody.data() + 8, 8);
  memcpy(&end, s.moveBody.data() + 16, 8);
  memcpy(&lostIndex, s.moveBody.data() + 24, 4);
  const uint64_t residue = s.recvHeader.piece;
  // No cut: a lane going back to a socket taken back (moveLaneHome): on
  // that socket it arrives, on the one it leaves a move naming that one
  // itself says where it ends there. Either may be read first.
  const bool back = cut == kNoPiece;
  const bool leaves = back && lostIndex == index;
  if (residue >= stride || lostIndex >= stripes_.size() ||
      (lostIndex == index && !leaves) || from % stride != residue ||
      end <= from)
    fail("the byte stream is out of step (a move that names no lane)", 0);
  if (leaves) {
    for (Lane& l : s.recvLanes)
      if (l.start % stride == residue && l.start <= from && from < l.end)
        l.end = from;
    std::erase_if(s.recvLanes, [](const Lane& l) { return l.next >= l.end; });
    s.recvPiece = nextPiece(s.recvLanes, kNoPiece);
    s.move = false;
    s.recvOffset = 0;
    moved_ = true;
    return true;
  }
  // From the first move on, every socket is read (progress) and nothing is
  // read straight into the caller's memory (placePayload).
  moved_ = true;
  Stripe& lost = stripes_[lostIndex];
  lost.recvLimit = std::min(lost.recvLimit, cut);
  // The lost socket's frames up to its end come first: a move among them
  // happened before this one.
  if (!back && lost.bytesIn < cut && !lost.closed) {
    s.moveWaits = true;
    return false;
  }
  if (!back && lost.bytesIn < cut)
    fail(
        "a lost socket closed before the frames its peer's kernel had "
        "acknowledged were read",
        0);
  s.moveWaits = false;
  // A frame begun past the lost socket's end is not read further: it comes
  // again here.
  if (!back && lost.recvOffset != 0 && lost.bytesIn - lost.recvOffset >= cut) {
    lost.recvOffset = 0;
    lost.placed = false;
    lost.duplicate = false;
    lost.move = false;
    lost.moveWaits = false;
    lost.farewell = false;
  }
  // The lane that holds `from`, wherever it is now (its open end, or a
  // part that was going back to its own socket), closes at `from`.
  Lane* open = nullptr;
  Stripe* holder = nullptr;
  for (Stripe& x : stripes_)
    for (Lane& l : x.recvLanes)
      if (l.start % stride == residue && l.start <= from && from < l.end) {
        open = &l;
        holder = &x;
      }
  // A part that ends (end) may have been read whole already, its lane
  // gone: what comes then is dropped as held (duplicates).
  // ... and a socket taken back that is lost again before its arrival
  // move was read: the lane left its holder (the leave came) and never got
  // there, so none holds it. It comes here.
  if (open == nullptr && end == kNoPiece && !back && !lost.awaitsMove)
    fail("the byte stream is out of step (a move from before its lane)", 0);
  if (open != nullptr) {
    open->end = from;
    // A piece of that lane at or past `from` half read on its old socket (a
    // socket lost before, past its end) comes here whole instead.
    const uint64_t reading = holder->recvPiece;
    if (holder->recvOffset != 0 && !holder->move && !holder->farewell &&
        reading != kNoPiece && reading % stride == residue && reading >= from) {
      holder->recvOffset = 0;
      holder->placed = false;
      holder->duplicate = false;
    }
    std::erase_if(holder->recvLanes,
                  [](const Lane& l) { return l.next >= l.end; });
    holder->recvPiece = nextPiece(holder->recvLanes, kNoPiece);
  }
  lost.awaitsMove = false;  // lost again before its arrival was read
  if (s.awaitsMove && ((homeDue_ >> index) & 1) != 0) {
    // The peer took this socket in too: this end's lanes go back to it.
    homeDue_ &= ~(uint64_t{1} << index);
    moveLaneHome(index);
  }
  s.awaitsMove = false;
  s.recvLanes.push_back({from, from, end});
  s.recvPiece = nextPiece(s.recvLanes, kNoPiece);
  s.move = false;
  s.recvOffset = 0;
  MCL_LOG(Info, kLogInit,
          "tcp to rank %d: the pieces from %llu on that %s carried (every "
          "%lluth) now come over %s",
          peerRank_, static_cast<unsigned long long>(from),
          stripeLink(lostIndex).c_str(),
          static_cast<unsigned long long>(stride), stripeLink(index).c_str());
  // The peer gave that socket up: this end sends nothing more on it either.
  if (!back && !lost.sendLost)
    failOver(lostIndex, "rank " + std::to_string(peerRank_) + " gave it up");
  return true;
}

void TcpConnection::releaseSlots(bool look) {
  if (!ackKnown_) {
    for (; sendReleased_ < sendFlushed_; ++sendReleased_)
      sendWritten_[sendReleased_ % shape_.slots] = 0;
    return;
  }
  if (look)
    for (Stripe& x : stripes_) {
      uint64_t unacked = 0;
      // A socket with nothing out (a standby, one idle) need not be asked.
      if (x.sendLost || x.acked == x.bytesOut ||
          !platform::bytesNotAcknowledged(x.socket.fd(), &unacked))
        continue;
      x.acked = x.bytesOut - std::min(unacked, x.bytesOut);
      for (uint64_t end : x.frameEnds)
        if (end <= x.acked) x.ackedFrameEnd = std::max(x.ackedFrameEnd, end);
      std::erase_if(x.frameEnds, [&x](uint64_t end) { return end <= x.acked; });
    }
  while (sendReleased_ < sendFlushed_) {
    const size_t slot = sendReleased_ % shape_.slots;
    if (stripes_[sendStripe_[slot]].acked < sendEnd_[slot]) break;
    sendWritten_[slot] = 0;
    sendCipher_[slot] = 0;
    ++sendReleased_;
  }
}

void TcpConnection::releaseCallerMemory() {
  // Where nothing can move, nothing is sent again: the caller's memory is
  // let go once written.
  if (!ackKnown_ || externalUpTo_ <= sendReleased_) return;
  size_t external = 0;
  for (uint64_t p = sendReleased_; p < externalUpTo_; ++p)
    if (sendExternal_[p % shape_.slots] != nullptr)
      external += sendLength_[p % shape_.slots];
  // A few KiB cost less to copy than to ask the kernel what it holds.
  constexpr size_t kCopyWithoutAsking = 16 * 1024;
  if (external > kCopyWithoutAsking) releaseSlots(true);
  for (uint64_t p = sendReleased_; p < externalUpTo_; ++p) {
    const size_t slot = p % shape_.slots;
    if (sendExternal_[slot] == nullptr) continue;
    memcpy(sendSlot(p), sendExternal_[slot], sendLength_[slot]);
    sendExternal_[slot] = nullptr;
  }
  externalUpTo_ = 0;
}

void TcpConnection::finish() {
  if (!ackKnown_ || broken_ || saidFarewell_) return;
  using Clock = std::chrono::steady_clock;
  const auto end = Clock::now() + std::chrono::seconds(1);
  while (Clock::now() < end) {
    progress();
    releaseSlots(true);
    if (sendReleased_ == sendCommitted_) return;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

}  // namespace mcl::transport::tcp
