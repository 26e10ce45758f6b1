// The last cable lost (tcp_connection.h): a standby socket over the path
// init would choose without the cables (the LAN), made at init and idle,
// takes every lane where no cable is left, under that path's own
// protection; a cable taken back takes its lane back from it
// (moveLaneHome). Made at init rather than when needed: both ends then
// have the same socket at the same index, whichever end lost the cable
// first, and a move needs no connection made in a hurry over a path that
// may itself be failing.
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "platform/tcp_progress.h"
#include "transports/tcp/tcp_connection.h"

namespace mcl::transport::tcp {

void TcpConnection::addStandby(ProvenSocket socket, WireProtect protect,
                               std::string link) {
  // Lanes move only where the kernel says what the peer acknowledged.
  if (hasStandby() ||
      !platform::tellsAcknowledgements(stripes_[0].socket.fd()) ||
      !platform::tellsAcknowledgements(socket.socket.fd()))
    return;
  Stripe s;
  s.socket = std::move(socket.socket);
  if (protect != WireProtect::None)
    s.seal = std::make_unique<PieceSeal>(socket.keys, protect, cipher_);
  s.sendPiece = kNoPiece;
  s.recvPiece = kNoPiece;
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
  bool down = false;
  for (const std::atomic<bool>* d : linkDown_)
    down |= d != nullptr && d->load(std::memory_order_relaxed);
  if (down) watchLinks();
  // Pieces written and maybe not acknowledged on links the watch calls
  // up: a silent one is found (linkTrouble looks at most every 100 ms).
  // A link down is the watch's to name, as in an operation's wait.
  if (!down && sendReleased_ < sendFlushed_) (void)linkTrouble();
  // Once a lane moved, the peer's moves are read and this end's written
  // (and a socket taken back, taken in) only where somebody looks.
  if (moved_ || !drained() || offered_.load(std::memory_order_relaxed))
    progress();
}

std::vector<size_t> TcpConnection::takersFor(size_t lost) const {
  auto usable = [&](size_t i) {
    const Stripe& x = stripes_[i];
    return i != lost && !x.sendLost && !(x.linkDown && x.linkDown->load()) &&
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
