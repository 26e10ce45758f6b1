// A cable back (tcp_connection.h): a new socket offered for one given up,
// taken in once the old one is read to its end, and the lane of its
// residue moved back to it.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/log.h"
#include "transports/tcp/tcp_connection.h"

namespace mcl::transport::tcp {

void TcpConnection::offerSocket(size_t stripe, ProvenSocket socket) {
  if (stripe >= stripes_.size()) return;
  std::lock_guard<std::mutex> lock(offersMutex_);
  // A later offer for the same socket replaces an earlier one (an attempt
  // over a cable that flapped again).
  std::erase_if(offers_, [&](const auto& o) { return o.first == stripe; });
  offers_.emplace_back(stripe, std::move(socket));
  offered_.store(true, std::memory_order_relaxed);
}

void TcpConnection::takeOffers() {
  if (offered_.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(offersMutex_);
    for (auto& o : offers_) {
      std::erase_if(waitingOffers_,
                    [&](const auto& w) { return w.first == o.first; });
      waitingOffers_.push_back(std::move(o));
    }
    offers_.clear();
    offered_.store(false, std::memory_order_relaxed);
  }
  if (saidFarewell_ || broken_) {
    waitingOffers_.clear();
    return;
  }
  std::vector<size_t> adopted;
  for (size_t k = 0; k < waitingOffers_.size();) {
    const size_t i = waitingOffers_[k].first;
    if (!stripeDone(i)) {
      ++k;
      continue;
    }
    ProvenSocket socket = std::move(waitingOffers_[k].second);
    waitingOffers_.erase(waitingOffers_.begin() + ptrdiff_t(k));
    adopt(i, std::move(socket));
    adopted.push_back(i);
  }
  // Lanes move once every socket back is in: a cable's lanes that the
  // standby carries go home, not onto another cable taken back with it.
  if (!movesBackSecond_)
    for (size_t i : adopted) moveLaneHome(i);
}

bool TcpConnection::stripeDone(size_t i) const {
  const Stripe& s = stripes_[i];
  // Given up here too, and nothing of it left to read: every lane it
  // carried this way ended and was read, and no move waits on its end.
  if (!s.sendLost || s.recvPiece != kNoPiece || s.recvOffset != 0 || s.move)
    return false;
  for (const Stripe& x : stripes_) {
    if (!x.moveWaits) continue;
    uint32_t waitsOn = 0;
    memcpy(&waitsOn, x.moveBody.data() + 24, 4);
    if (waitsOn == i) return false;
  }
  return true;
}

void TcpConnection::adopt(size_t i, ProvenSocket socket) {
  // Pieces written on the old socket and not yet released are all
  // acknowledged there (those past its end went again elsewhere, and are
  // counted there): their place in its byte stream means nothing in the
  // new one's.
  for (uint64_t p = sendReleased_; p < sendCommitted_; ++p) {
    const size_t slot = p % shape_.slots;
    if (sendWritten_[slot] != 0 && sendStripe_[slot] == i) sendEnd_[slot] = 0;
  }
  Stripe fresh = idleStripe(std::move(socket), protect_);
  fresh.linkDown = stripes_[i].linkDown;
  fresh.awaitsMove = true;
  stripes_[i] = std::move(fresh);
  givenUp_.fetch_and(~(uint64_t{1} << i), std::memory_order_relaxed);
  socketsRegained_.fetch_add(1, std::memory_order_relaxed);
  // Said once per link, when its last socket is back.
  bool linkWhole = true;
  for (size_t x = 0; x < stripes_.size(); ++x)
    if (stripeLink(x) == stripeLink(i) && stripes_[x].sendLost)
      linkWhole = false;
  if (linkWhole)
    MCL_LOG(Warn, kLogInit,
            "tcp to rank %d: %s is taken back into use: it came back and a "
            "new connection over it proved itself; what it carried comes "
            "back to it",
            peerRank_, stripeLink(i).c_str());
  // The lanes move back now (takeOffers), or at the peer's first move on
  // it.
  if (movesBackSecond_) homeDue_ |= uint64_t{1} << i;
}

TcpConnection::Stripe TcpConnection::idleStripe(ProvenSocket socket,
                                                WireProtect protect) const {
  Stripe s;
  s.socket = std::move(socket.socket);
  if (protect != WireProtect::None)
    s.seal = std::make_unique<PieceSeal>(socket.keys, protect, cipher_);
  s.sendPiece = kNoPiece;
  s.recvPiece = kNoPiece;
  return s;
}

void TcpConnection::moveLaneHome(size_t i) {
  // Lost again since it was taken in: nothing goes to it.
  if (stripes_[i].sendLost) return;
  moveLane(i, i);
  // Lanes of cables still lost that the standby carries come here too:
  // any cable is faster than the LAN, and theirs may never come back. Each
  // goes to the socket of its own place among its cable's sockets (two
  // sockets a cable: residue 3, its cable's second, to this cable's
  // second), so that a cable's sockets share them.
  if (!hasStandby() || i >= residues_) return;
  for (size_t r = 0; r < residues_; ++r)
    if (r != i && stripes_[r].sendLost &&
        placeOnCable(r) % socketsOnCable(i) == placeOnCable(i))
      moveLane(r, i, standbyIndex());
}

size_t TcpConnection::socketsOnCable(size_t i) const {
  size_t n = 0;
  for (size_t j = 0; j < residues_; ++j) n += stripeLink(j) == stripeLink(i);
  return n;
}

size_t TcpConnection::placeOnCable(size_t i) const {
  size_t place = 0;
  for (size_t j = 0; j < i; ++j) place += stripeLink(j) == stripeLink(i);
  return place;
}

void TcpConnection::moveLane(size_t residue, size_t i, size_t onlyFrom) {
  const auto stride = static_cast<uint64_t>(residues_);
  // The open lane of the residue, wherever it went: on a socket's lanes,
  // or still behind a move not yet written there (then it stays: it has
  // not begun to go, and is not worth the wait).
  for (size_t j = 0; j < stripes_.size(); ++j) {
    Stripe& holder = stripes_[j];
    if (j == i || holder.sendLost || (onlyFrom != kAnySocket && j != onlyFrom))
      continue;
    for (Lane& l : holder.sendLanes) {
      if (l.end != kNoPiece || l.start % stride != residue) continue;
      // The piece the holder is writing (or sealed) goes out there whole;
      // from the next one of the lane on, the lane is on socket i.
      uint64_t from = l.next;
      if (holder.sendPiece == l.next &&
          (holder.sendOffset != 0 || holder.sendSealed))
        from += stride;
      l.end = from;
      std::erase_if(holder.sendLanes,
                    [](const Lane& x) { return x.next >= x.end; });
      holder.sendPiece = nextPiece(holder.sendLanes, kNoPiece);
      // Where it ends on the holder (before its next piece there), and
      // where it starts on socket i: the receiver may read either first.
      queueMove(j, residue, from, kNoPiece, j);
      queueMove(i, residue, from, kNoPiece, j);
      MCL_LOG(Info, kLogInit,
              "tcp to rank %d: the pieces from %llu on that %s carried "
              "(every %lluth) go %s %s",
              peerRank_, static_cast<unsigned long long>(from),
              stripeLink(j).c_str(), static_cast<unsigned long long>(stride),
              residue == i ? "back to" : "on to", stripeLink(i).c_str());
      return;
    }
  }
}

}  // namespace mcl::transport::tcp
