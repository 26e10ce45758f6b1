// The last cable lost (tcp_connection.h): a standby socket over the path
// init would choose without the cables (the LAN), made at init and idle,
// takes every lane where no cable is left, under that path's own
// protection; a cable taken back takes its lane back from it
// (moveLaneHome). Made at init rather than when needed: both ends then
// have the same socket at the same index, whichever end lost the cable
// first, and a move needs no connection made in a hurry over a path that
// may itself be failing.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "platform/tcp_progress.h"
#include "transports/tcp/tcp_connection.h"

namespace mcl::transport::tcp {

void TcpConnection::addStandby(ProvenSocket socket, WireProtect protect,
                               std::string link) {
  // Lanes move only where the kernel says what the peer acknowledged.
  // givenUp_ has a bit per socket (64).
  if (hasStandby() || residues_ >= 63 ||
      !platform::tellsAcknowledgements(stripes_[0].socket.fd()) ||
      !platform::tellsAcknowledgements(socket.socket.fd()))
    return;
  Stripe s = idleStripe(std::move(socket), protect);
  s.standby = true;
  stripes_.push_back(std::move(s));
  const bool watched = !stripeLinks_.empty();
  for (size_t i = stripeLinks_.size(); i < residues_; ++i)
    stripeLinks_.push_back("socket " + std::to_string(i));
  stripeLinks_.push_back(std::move(link));
  // A standby that carries and goes silent is a link lost like another.
  if (watched)
    silence_ =
        LinkSilence("tcp to rank " + std::to_string(peerRank_), stripeLinks_);
  ackKnown_ = true;
}

void TcpConnection::tend() {
  // Only where lanes can move; nothing to do on a connection at rest.
  if (!ackKnown_ || broken_ || saidFarewell_) return;
  try {
    bool down = false;
    for (const std::atomic<bool>* d : linkDown_)
      down |= d != nullptr && d->load(std::memory_order_relaxed);
    if (down) watchLinks();
    // Pieces written and maybe not acknowledged: a silent link is found.
    // A cable down is the watch's to name, as in an operation's wait,
    // unless the standby carries everything: then its silence is the end.
    const auto now = std::chrono::steady_clock::now();
    if ((!down || onStandbyAlone()) && sendReleased_ < sendFlushed_ &&
        now >= nextTendLook_) {
      nextTendLook_ = now + std::chrono::milliseconds(100);
      const std::string trouble = lookForSilence();
      if (!trouble.empty() && onStandbyAlone()) fail(trouble.c_str(), 0);
    }
    // Once a lane moved, the peer's moves are read and this end's written
    // (and a socket taken back, taken in) only where somebody looks.
    if (moved_ || !drained() || offered_.load(std::memory_order_relaxed))
      progress();
  } catch (const Error& e) {
    // A step that waits on this connection says it (peerAlive is false
    // now); an operation with other peers goes on.
    broken_ = true;
    if (tendFailure_.empty()) tendFailure_ = e.what();
  }
}

bool TcpConnection::onStandbyAlone() const {
  if (!hasStandby() || stripes_[standbyIndex()].sendLost) return false;
  for (size_t i = 0; i < residues_; ++i)
    if (!stripes_[i].sendLost) return false;
  return true;
}

std::vector<size_t> TcpConnection::takersFor(size_t lost) const {
  auto usable = [&](size_t i) {
    const Stripe& x = stripes_[i];
    // A socket the peer closed takes nothing (a standby it did not keep).
    return i != lost && !x.sendLost && !x.closed &&
           !(x.linkDown && x.linkDown->load()) &&
           stripeLink(i) != stripeLink(lost);
  };
  // The sockets on other cables that still carry, taken in turn from the
  // one after the lost; the standby only where none is left.
  std::vector<size_t> takers;
  for (size_t d = 1; d <= residues_; ++d)
    if (usable((lost + d) % residues_))
      takers.push_back((lost + d) % residues_);
  if (takers.empty() && hasStandby() && usable(standbyIndex()))
    takers.push_back(standbyIndex());
  return takers;
}

}  // namespace mcl::transport::tcp
