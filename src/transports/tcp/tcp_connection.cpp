#include "transports/tcp/tcp_connection.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "platform/tcp_progress.h"
#include "transports/tcp/farewell_scan.h"

namespace mcl::transport::tcp {

namespace {

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

#if defined(MSG_NOSIGNAL)
constexpr int kSendFlags = MSG_NOSIGNAL;
#else
constexpr int kSendFlags = 0;  // SO_NOSIGPIPE is set on the socket
#endif

constexpr size_t kHeaderBytes = sizeof(PieceHeader);
static_assert(kHeaderBytes == 8);

}  // namespace

bool pieceHeaderExpected(const PieceHeader& header, uint64_t piece,
                         uint32_t slotBytes) {
  return header.piece == static_cast<uint32_t>(piece) && header.length != 0 &&
         header.length <= slotBytes;
}

TcpConnection::TcpConnection(int peerRank, std::vector<ProvenSocket> sockets,
                             const TcpSlots& shape, std::string link,
                             WireProtect protect, PieceCipher cipher,
                             std::vector<std::string> stripeLinks)
    : peerRank_(peerRank),
      link_(std::move(link)),
      silence_("tcp to rank " + std::to_string(peerRank), stripeLinks),
      protect_(protect),
      cipher_(cipher),
      shape_(shape),
      sendBuffer_(size_t{shape.slots} * shape.slotBytes),
      sendLength_(shape.slots),
      sendExternal_(shape.slots),
      recvBuffer_(size_t{shape.slots} * shape.slotBytes),
      recvLength_(shape.slots),
      recvDone_(shape.slots),
      sendWritten_(shape.slots),
      sendStripe_(shape.slots),
      sendEnd_(shape.slots),
      sendTags_(shape.slots),
      sendCipher_(shape.slots),
      stripeLinks_(std::move(stripeLinks)),
      headerPiece_(shape.slots, UINT64_MAX),
      headerLength_(shape.slots),
      pieceStart_(shape.slots),
      recvDirect_(shape.slots) {
  for (size_t i = 0; i < sockets.size(); ++i) {
    Stripe s;
    s.socket = std::move(sockets[i].socket);
    if (protect != WireProtect::None)
      s.seal = std::make_unique<PieceSeal>(sockets[i].keys, protect, cipher);
    s.sendPiece = i;
    s.recvPiece = i;
    s.sendLanes.push_back({i, i});
    s.recvLanes.push_back({i, i});
    stripes_.push_back(std::move(s));
  }
  residues_ = stripes_.size();
  // Lanes move only where another link can take them and the kernel says
  // what it acknowledged. Elsewhere (one link: loopback, a LAN, a single
  // cable) a slot is free again once written, as it always was: no cost.
  std::vector<std::string> links;
  for (const std::string& l : stripeLinks_)
    if (std::find(links.begin(), links.end(), l) == links.end())
      links.push_back(l);
  ackKnown_ = links.size() > 1 &&
              platform::tellsAcknowledgements(stripes_[0].socket.fd());
}

std::byte* TcpConnection::sendSlot(uint64_t piece) const {
  return const_cast<std::byte*>(sendBuffer_.data()) +
         (piece % shape_.slots) * shape_.slotBytes;
}

std::byte* TcpConnection::recvSlot(uint64_t piece) const {
  return const_cast<std::byte*>(recvBuffer_.data()) +
         (piece % shape_.slots) * shape_.slotBytes;
}

std::byte* TcpConnection::recvPayload(uint64_t piece) const {
  std::byte* direct = recvDirect_[piece % shape_.slots];
  return direct != nullptr ? direct : recvSlot(piece);
}

void TcpConnection::learnHeader(uint64_t piece, uint32_t length) {
  const size_t slot = piece % shape_.slots;
  headerPiece_[slot] = piece;
  headerLength_[slot] = length;
  // Stripes read headers out of order: a start is known once every piece
  // before it has its header.
  for (size_t next = startsKnown_ % shape_.slots;
       headerPiece_[next] == startsKnown_; next = startsKnown_ % shape_.slots) {
    pieceStart_[next] = nextStart_;
    nextStart_ += headerLength_[next];
    ++startsKnown_;
  }
}

bool TcpConnection::placePayload(uint64_t piece) {
  const size_t slot = piece % shape_.slots;
  recvDirect_[slot] = nullptr;
  // Never under MCL_WIRE_PROTECT: a piece is checked before anybody may
  // see it, in its slot. Nor once a lane moved: an earlier piece's header
  // (which says where this one starts) may wait behind a move that waits
  // in turn for this socket's last frames.
  if (postDst_ == nullptr || sealed() || moved_) return true;
  // Where the piece starts comes with an earlier piece's header, on another
  // socket: this one waits for it (read in the same pass, or soon), unless
  // it starts past the post's end whatever that start is. Not for long:
  // that socket's cable may be lost, and the move that says so may come
  // behind this very piece. It then goes to its slot.
  if (piece >= startsKnown_) {
    if (nextStart_ >= postEnd_) return true;
    const int64_t now = nowNs();
    if (placeWaitSinceNs_ == 0) placeWaitSinceNs_ = now;
    if (now - placeWaitSinceNs_ < kLongestPlaceWaitNs) return false;
    placeWaitSinceNs_ = 0;
    return true;
  }
  placeWaitSinceNs_ = 0;
  const uint64_t start = pieceStart_[slot];
  if (start >= postStart_ && start + headerLength_[slot] <= postEnd_)
    recvDirect_[slot] = postDst_ + (start - postStart_);
  return true;
}

void TcpConnection::postRecv(std::byte* dst, size_t bytes) {
  postDst_ = dst;
  postStart_ = bytesReleased_;
  postEnd_ = bytesReleased_ + bytes;
}

void TcpConnection::withdrawRecv() {
  if (postDst_ == nullptr) return;
  postDst_ = nullptr;
  // A piece read (or being read) into the caller's memory and not yet
  // taken: only a failed call leaves one. Its bytes cannot follow it back
  // into the slot, so the stream cannot go on.
  for (std::byte*& direct : recvDirect_) {
    if (direct != nullptr && !broken_) {
      broken_ = true;
      if (peerFarewell_.empty())
        peerFarewell_ =
            "a call failed while a piece from it was read into that call's "
            "buffer: the connection cannot go on";
    }
    direct = nullptr;
  }
}

void TcpConnection::fail(const char* what, int err) {
  broken_ = true;
  // A broken socket (err set, not a stream out of step): the peer may
  // have said why before it closed.
  if (err != 0 && peerFarewell_.empty()) peerFarewell_ = farewellBehind();
  const std::string said =
      peerFarewell_.empty() ? "" : ", after it said: " + peerFarewell_;
  throw error(mclRemoteError, "tcp to rank %d over %s: %s%s%s%s", peerRank_,
              link_.c_str(), what, err != 0 ? ": " : "",
              err != 0 ? strerror(err) : "", said.c_str());
}

std::string TcpConnection::farewellBehind() {
  // More than any socket buffer holds: the scan ends at the buffer's end
  // (EAGAIN) long before.
  constexpr size_t kMostBytes = size_t{64} << 20;
  const auto stride = static_cast<uint64_t>(residues_);
  std::vector<std::byte> chunk(64 * 1024);
  for (Stripe& s : stripes_) {
    const size_t tag = tagBytes(s);
    // Once a lane moved, the frames' indices no longer follow the stride:
    // a protected farewell could not be checked.
    if (s.closed || (moved_ && tag != 0)) continue;
    const size_t read = s.recvOffset;
    FarewellScan scan =
        s.farewell ? scanInFarewell(s)
        : read < kHeaderBytes
            ? FarewellScan::inHeader(
                  std::as_bytes(std::span(&s.recvHeader, 1)).first(read),
                  shape_.slotBytes, tag)
            : FarewellScan::inPayload(
                  s.recvHeader.length + tag - (read - kHeaderBytes),
                  shape_.slotBytes, tag);
    if (s.carryAt < s.carry.size())
      scan.feed(std::span(s.carry).subspan(s.carryAt));
    for (size_t total = 0; scan.wantsMore() && total < kMostBytes;) {
      ssize_t n = recv(s.socket.fd(), chunk.data(), chunk.size(), MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // the end, nothing more yet, or the reset
      total += static_cast<size_t>(n);
      scan.feed(std::span(chunk).first(static_cast<size_t>(n)));
    }
    std::string text =
        s.seal ? openedFarewell(s, scan, stride) : scan.farewell();
    if (!text.empty()) return text;
  }
  return "";
}

FarewellScan TcpConnection::scanInFarewell(const Stripe& s) const {
  // What came of the farewell's frame: its text, then (protected) its tag.
  const size_t got = s.recvOffset - kHeaderBytes;
  std::vector<std::byte> partial(
      std::as_bytes(std::span(s.farewellText)).begin(),
      std::as_bytes(std::span(s.farewellText)).begin() +
          static_cast<ptrdiff_t>(std::min(got, kFarewellTextBytes)));
  if (got > kFarewellTextBytes) {
    const auto tagRead =
        std::as_bytes(std::span(s.recvTag)).first(got - kFarewellTextBytes);
    partial.insert(partial.end(), tagRead.begin(), tagRead.end());
  }
  return FarewellScan::inFarewell(partial, shape_.slotBytes, tagBytes(s));
}

std::string TcpConnection::openedFarewell(const Stripe& s,
                                          const FarewellScan& scan,
                                          uint64_t stride) const {
  // Behind a broken socket as anywhere: only a farewell whose tag holds,
  // sealed as this socket's next frame, says anything. The pieces before
  // it are not checked; they no longer matter.
  const std::span<const std::byte> frame = scan.sealedFrame();
  if (frame.empty()) return "";
  std::array<char, kFarewellTextBytes> text{};
  memcpy(text.data(), frame.data(), kFarewellTextBytes);
  PieceTag tag{};
  memcpy(tag.data(), frame.data() + kFarewellTextBytes, tag.size());
  const PieceHeader header{kFarewellLength, 0};
  const uint64_t index = s.recvPiece + scan.piecesPassed() * stride;
  if (!s.seal->open(index, SealedFrame::Farewell, &header, text.data(),
                    text.size(), tag))
    return "it sent a farewell that failed its integrity check (altered on "
           "the way)";
  const std::string said(text.data(), strnlen(text.data(), text.size()));
  return said.empty() ? "it said farewell" : said;
}

bool TcpConnection::peerAlive() const {
  if (broken_) return false;
  // A peer that sent everything and closed is not gone for pieces still on
  // other stripes: only the stripe that must carry the next piece counts.
  const Stripe& next = stripes_[recvOwner(recvConsumed_)];
  return !(next.closed && recvDone_[recvConsumed_ % shape_.slots] == 0);
}

uint64_t TcpConnection::bytesResent() const {
  uint64_t total = 0;
  for (const Stripe& s : stripes_) {
    uint64_t bytes = 0;
    if (socketResentBytes(s.socket.fd(), &bytes)) total += bytes;
  }
  return total;
}

std::string TcpConnection::linkTrouble() {
  std::string trouble = lookForSilence();
  fullLookDue_ = stripes_.size() > 1;
  return trouble;
}

std::string TcpConnection::lookForSilence() {
  // A socket given up on a link the watch says is up again may still be
  // backing off its retransmissions: it says nothing of the link, whose
  // new sockets (taken back, or to be) speak for it.
  std::vector<int> fds;
  std::vector<bool> down;
  for (const Stripe& s : stripes_) {
    const bool linkDown = s.linkDown && s.linkDown->load();
    fds.push_back(s.sendLost && s.linkDown && !linkDown ? -1 : s.socket.fd());
    down.push_back(linkDown);
  }
  std::string trouble = silence_.check(fds, nowNs(), down);
  // A silent link's sockets are given up where another link carries.
  if (trouble.empty() && ackKnown_)
    for (size_t i = 0; i < stripes_.size(); ++i)
      if (!stripes_[i].sendLost && silence_.silent(stripeLink(i)))
        failOver(i,
                 "it takes bytes and acknowledges none though its link is "
                 "up");
  // Every cable lost: the standby is the last path, and its silence ends
  // it (the cables' sockets, given up before they held anything, are not
  // silent themselves).
  if (trouble.empty() && onStandbyAlone() &&
      silence_.silent(stripeLink(standbyIndex())))
    trouble = "every cable is lost, and " + stripeLink(standbyIndex()) +
              ", the standby that took what they carried, takes bytes and "
              "acknowledges none";
  return trouble;
}

std::string TcpConnection::peerGoneReason() const {
  if (!peerFarewell_.empty()) return peerFarewell_;
  if (!tendFailure_.empty()) return tendFailure_;
  return "it closed the connection without a word: its process exited, or "
         "a failure cut it";
}

void TcpConnection::sayFarewell(const std::string& reason) {
  if (saidFarewell_ || broken_) return;
  saidFarewell_ = true;
  const PieceHeader header{kFarewellLength, 0};
  for (Stripe& s : stripes_) {
    // A socket in the middle of a piece (or a move) cannot take it: the
    // peer sees that one close instead. The sockets do not block; what does
    // not fit in the socket's buffer is dropped.
    if (s.sendOffset != 0 || s.controlAt != 0 || s.sendLost) continue;
    std::array<char, kHeaderBytes + kFarewellTextBytes + kPieceTagBytes>
        frame{};
    memcpy(frame.data(), &header, kHeaderBytes);
    char* text = frame.data() + kHeaderBytes;
    memcpy(text, reason.data(),
           std::min(reason.size(), kFarewellTextBytes - 1));
    if (s.seal) {
      const PieceTag tag =
          s.seal->seal(s.sendPiece, SealedFrame::Farewell, &header, text, text,
                       kFarewellTextBytes);
      memcpy(text + kFarewellTextBytes, tag.data(), tag.size());
    }
    if (send(s.socket.fd(), frame.data(),
             kHeaderBytes + kFarewellTextBytes + tagBytes(s), kSendFlags) < 0) {
      // Best effort: the peer may be gone already.
    }
  }
}

void TcpConnection::takeFarewell(Stripe& s) {
  const size_t got = std::min(s.recvOffset - kHeaderBytes, kFarewellTextBytes);
  s.closed = true;
  if (s.seal) {
    // Only a whole farewell whose tag holds says anything: text from
    // anyone else on the path is never shown.
    const PieceHeader header{kFarewellLength, 0};
    const bool whole =
        s.recvOffset == kHeaderBytes + kFarewellTextBytes + kPieceTagBytes;
    if (!whole ||
        !s.seal->open(s.recvPiece, SealedFrame::Farewell, &header,
                      s.farewellText.data(), kFarewellTextBytes, s.recvTag)) {
      peerFarewell_ =
          whole ? "it sent a farewell that failed its integrity check (altered "
                  "on the way)"
                : "it closed the connection during its farewell";
      return;
    }
  }
  peerFarewell_.assign(s.farewellText.data(),
                       strnlen(s.farewellText.data(), got));
  if (peerFarewell_.empty()) peerFarewell_ = "it said farewell";
}

bool TcpConnection::waitsForPlace(const Stripe& s) const {
  return s.recvOffset == kHeaderBytes && !s.farewell && !s.placed &&
         postDst_ != nullptr && tagBytes(s) == 0 && !moved_ &&
         s.recvPiece >= startsKnown_ && nextStart_ < postEnd_;
}

bool TcpConnection::wantsRead(size_t i) const {
  const Stripe& s = stripes_[i];
  // Broken (a failure tend() found): nothing more is read or written; a
  // wait would find its sockets readable for ever.
  if (broken_) return false;
  // A socket taken back before its first move, and an idle standby: a move
  // may come at any time (a full window waits, as on any socket).
  if (moved_)
    return (readsNow(s) ||
            ((s.awaitsMove || (s.standby && s.recvLanes.empty())) &&
             !s.closed && !s.moveWaits && s.bytesIn < s.recvLimit)) &&
           !waitsForPlace(s);
  if (s.closed || s.recvPiece >= recvConsumed_ + shape_.slots) return false;
  // What progress() reads when nothing comes: the socket of the next
  // header due, and those in the middle of a piece that is not waiting to
  // learn its place. A waker that polled the others would find them
  // readable and never sleep.
  return i == startsKnown_ % residues_ ||
         (s.recvOffset != 0 && !waitsForPlace(s));
}

bool TcpConnection::wantsWrite(size_t i) const {
  const Stripe& s = stripes_[i];
  return !broken_ && !s.sendLost && !saidFarewell_ &&
         (s.sendPiece < sendCommitted_ || s.controlAt < s.control.size());
}

std::byte* TcpConnection::sealedPayload(Stripe& s, const PieceHeader& header) {
  const size_t slot = s.sendPiece % shape_.slots;
  std::byte* payload = sendExternal_[slot] != nullptr
                           ? const_cast<std::byte*>(sendExternal_[slot])
                           : sendSlot(s.sendPiece);
  if (!s.seal || s.sendSealed) return payload;
  // Encrypted into the slot's own buffer (the caller's memory is never
  // written); under mac the payload goes out as it is.
  std::byte* out =
      s.seal->mode() == WireProtect::Encrypt ? sendSlot(s.sendPiece) : payload;
  s.sendTag = s.seal->seal(s.sendPiece, SealedFrame::Piece, &header, payload,
                           out, header.length);
  sendExternal_[slot] = out == payload ? sendExternal_[slot] : nullptr;
  if (s.seal->mode() == WireProtect::Encrypt)
    sendCipher_[slot] = static_cast<uint32_t>(&s - stripes_.data()) + 1;
  s.sendSealed = true;
  return out;
}

void TcpConnection::pushStripe(Stripe& s) {
  if (saidFarewell_ || s.sendLost) return;
  const size_t tag = tagBytes(s);
  while (true) {
    // Moves go between pieces, before the next one.
    // Not before a piece sealed already (its tag is for it, and the move
    // would change which piece goes next): that one goes first.
    if (s.sendOffset == 0 && !s.sendSealed && s.controlAt < s.control.size() &&
        !pushControl(s))
      return;
    if (s.sendLost || s.sendPiece >= sendCommitted_) return;
    const size_t slot = s.sendPiece % shape_.slots;
    const uint32_t length = sendLength_[slot];
    PieceHeader header{length, static_cast<uint32_t>(s.sendPiece)};
    std::byte* payload = sealedPayload(s, header);
    // Header, payload and tag, from where the last write stopped.
    iovec iov[3];
    int count = 0;
    size_t skip = s.sendOffset;
    auto add = [&](void* base, size_t bytes) {
      if (skip >= bytes) {
        skip -= bytes;
        return;
      }
      iov[count++] = {static_cast<char*>(base) + skip, bytes - skip};
      skip = 0;
    };
    add(&header, kHeaderBytes);
    add(payload, length);
    add(s.sendTag.data(), tag);
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<decltype(msg.msg_iovlen)>(count);
    ssize_t n = sendmsg(s.socket.fd(), &msg, kSendFlags);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      sendFailed(s, errno);
      return;
    }
    s.sendOffset += static_cast<size_t>(n);
    s.bytesOut += static_cast<uint64_t>(n);
    bytesWritten_.store(bytesWritten_.load(std::memory_order_relaxed) +
                            static_cast<uint64_t>(n),
                        std::memory_order_relaxed);
    if (s.sendOffset < kHeaderBytes + length + tag) return;  // buffer full
    sendWritten_[slot] = 1;
    sendStripe_[slot] = static_cast<uint32_t>(&s - stripes_.data());
    sendEnd_[slot] = s.bytesOut;
    if (ackKnown_) s.frameEnds.push_back(s.bytesOut);
    if (tag != 0) sendTags_[slot] = s.sendTag;
    s.sendOffset = 0;
    s.sendSealed = false;
    advance(s.sendLanes, s.sendPiece, &s.sendPiece);
  }
}

bool TcpConnection::pushControl(Stripe& s) {
  while (s.controlAt < s.control.size()) {
    const ssize_t n = send(s.socket.fd(), s.control.data() + s.controlAt,
                           s.control.size() - s.controlAt, kSendFlags);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
      if (errno == EINTR) continue;
      sendFailed(s, errno);
      return false;
    }
    s.controlAt += static_cast<size_t>(n);
    s.bytesOut += static_cast<uint64_t>(n);
  }
  // From here on the peer counts the moved lanes on this socket too.
  const uint64_t base = s.bytesOut - s.control.size();
  for (size_t end : s.controlEnds) s.frameEnds.push_back(base + end);
  s.control.clear();
  s.controlEnds.clear();
  s.controlAt = 0;
  s.sendLanes.insert(s.sendLanes.end(), s.lanesAfterControl.begin(),
                     s.lanesAfterControl.end());
  s.lanesAfterControl.clear();
  s.sendPiece = nextPiece(s.sendLanes, kNoPiece);
  return true;
}

void TcpConnection::sendFailed(Stripe& s, int err) {
  // A path that failed (the cable, a route), not the peer's own close or
  // reset: its pieces may go on over another socket.
  const bool path = err == ETIMEDOUT || err == EHOSTUNREACH ||
                    err == ENETUNREACH || err == ENETDOWN || err == EHOSTDOWN;
  const size_t index = static_cast<size_t>(&s - stripes_.data());
  if (path && failOver(index, std::string("a send failed: ") + strerror(err)))
    return;
  fail("the connection broke while sending", err);
}

ssize_t TcpConnection::readStripe(Stripe& s, void* target, size_t want) {
  if (s.carryAt < s.carry.size()) {
    const size_t n = std::min(want, s.carry.size() - s.carryAt);
    memcpy(target, s.carry.data() + s.carryAt, n);
    s.carryAt += n;
    if (s.carryAt == s.carry.size()) {
      s.carry.clear();
      s.carryAt = 0;
    }
    return static_cast<ssize_t>(n);
  }
  const ssize_t n = recv(s.socket.fd(), target, want, 0);
  s.drained = n > 0 && static_cast<size_t>(n) < want;
  s.idle = s.drained || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
  return n;
}

ssize_t TcpConnection::readWhole(Stripe& s) {
  std::byte* slot = recvSlot(s.recvPiece);
  iovec iov[2] = {{&s.recvHeader, kHeaderBytes}, {slot, shape_.slotBytes}};
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = 2;
  const ssize_t n = recvmsg(s.socket.fd(), &msg, 0);
  s.drained = n > 0 && static_cast<size_t>(n) < kHeaderBytes + shape_.slotBytes;
  s.idle = s.drained || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
  if (n <= static_cast<ssize_t>(kHeaderBytes)) return n;
  // Past the header: a farewell's text, or the piece's payload and maybe
  // the next bytes of this socket. The text and the bytes past the piece
  // are carried: the usual reads take them, in order.
  const size_t past = static_cast<size_t>(n) - kHeaderBytes;
  const bool piece =
      s.recvHeader.length != kFarewellLength &&
      pieceHeaderExpected(s.recvHeader, s.recvPiece, shape_.slotBytes);
  const size_t kept = piece ? std::min<size_t>(past, s.recvHeader.length) : 0;
  s.carry.assign(slot + kept, slot + past);
  s.carryAt = 0;
  if (!piece) return static_cast<ssize_t>(kHeaderBytes);
  // The payload is in the slot already: it was placed there.
  learnHeader(s.recvPiece, s.recvHeader.length);
  recvDirect_[s.recvPiece % shape_.slots] = nullptr;
  s.placed = true;
  return static_cast<ssize_t>(kHeaderBytes + kept);
}

bool TcpConnection::readsNow(const Stripe& s) const {
  return !s.closed && !s.moveWaits && s.bytesIn < s.recvLimit &&
         (s.recvPiece < recvConsumed_ + shape_.slots || s.move || s.farewell);
}

bool TcpConnection::mayRead(Stripe& s, bool look) {
  if (readsNow(s)) return true;
  // The piece due next has no free slot yet (or none is due): a move may
  // come before it, saying that the piece the window waits on comes
  // elsewhere. Looked at where one may come: a lane moved, or a look that
  // every socket gets now and then.
  if (s.closed || s.moveWaits || s.bytesIn >= s.recvLimit ||
      s.recvOffset != 0 || !(moved_ || look) ||
      (s.recvPiece == kNoPiece && s.recvLimit == kNoPiece && !s.awaitsMove &&
       !s.standby))
    return false;
  PieceHeader next{};
  auto* bytes = reinterpret_cast<std::byte*>(&next);
  const size_t carried = std::min(s.carry.size() - s.carryAt, kHeaderBytes);
  if (carried > 0) memcpy(bytes, s.carry.data() + s.carryAt, carried);
  if (carried < kHeaderBytes) {
    const ssize_t n = recv(s.socket.fd(), bytes + carried,
                           kHeaderBytes - carried, MSG_PEEK | MSG_DONTWAIT);
    // The peer closed it: nothing more comes (a wait would find it
    // readable for ever).
    if (n == 0 && carried == 0) s.closed = true;
    if (n != static_cast<ssize_t>(kHeaderBytes - carried)) return false;
  }
  // A farewell is read where it is (an idle socket gets one too).
  return next.length == kMoveLength || next.length == kFarewellLength;
}

bool TcpConnection::pullStripe(Stripe& s, bool look) {
  bool moved = false;
  const size_t tag = tagBytes(s);
  // Until the socket runs dry: a read that took less than it asked ends the
  // look (the next progress() reads again), so that a small message costs
  // no read that can only find nothing.
  s.drained = false;
  while (!s.drained && mayRead(s, look)) {
    // What comes next: the header, then the farewell's text, the move's
    // body or the piece's payload, then (under protection) the tag.
    const size_t body = s.farewell ? kFarewellTextBytes
                        : s.move   ? kMoveBytes
                                   : s.recvHeader.length;
    char* target;
    size_t want;
    if (s.recvOffset < kHeaderBytes) {
      target = reinterpret_cast<char*>(&s.recvHeader) + s.recvOffset;
      want = kHeaderBytes - s.recvOffset;
    } else if (s.recvOffset < kHeaderBytes + body) {
      const size_t done = s.recvOffset - kHeaderBytes;
      if (!s.farewell && !s.move && !s.placed) {
        if (!placePayload(s.recvPiece)) return moved;
        s.placed = true;
      }
      target = s.farewell ? s.farewellText.data() + done
               : s.move   ? reinterpret_cast<char*>(s.moveBody.data()) + done
               : s.duplicate
                   ? reinterpret_cast<char*>(s.scratch.data()) + done
                   : reinterpret_cast<char*>(recvPayload(s.recvPiece)) + done;
      want = body - done;
    } else {
      const size_t done = s.recvOffset - kHeaderBytes - body;
      target = reinterpret_cast<char*>(s.recvTag.data()) + done;
      want = tag - done;
    }
    // A small message's header and payload in one call, where nothing
    // could want the payload elsewhere (no post, no tag to check first, no
    // lane moved: a piece may then be one held already).
    const bool whole = s.recvOffset == 0 && s.idle && s.carry.empty() &&
                       tag == 0 && postDst_ == nullptr && !moved_;
    ssize_t n = whole ? readWhole(s) : readStripe(s, target, want);
    if (n == 0) {
      // Not an error yet: the peer may have sent all we need before it
      // closed. peerAlive() turns false, and a wait on it fails.
      if (s.farewell) takeFarewell(s);  // what of the text came
      s.closed = true;
      return true;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return moved;
      if (errno == EINTR) continue;
      fail("the connection broke while receiving", errno);
    }
    moved = true;
    s.recvOffset += static_cast<size_t>(n);
    s.bytesIn += static_cast<uint64_t>(n);
    if (s.recvOffset == kHeaderBytes &&
        s.recvHeader.length == kFarewellLength) {
      s.farewell = true;
      continue;
    }
    if (s.recvOffset == kHeaderBytes && s.recvHeader.length == kMoveLength) {
      s.move = true;
      continue;
    }
    if (s.farewell) {
      if (s.recvOffset == kHeaderBytes + kFarewellTextBytes + tag) {
        takeFarewell(s);
        return true;
      }
      continue;
    }
    if (s.move) {
      if (s.recvOffset == kHeaderBytes + kMoveBytes + tag &&
          !takeMove(s, static_cast<size_t>(&s - stripes_.data())))
        return true;  // it waits for the lost socket's last frames
      continue;
    }
    if (s.recvOffset >= kHeaderBytes &&
        s.recvOffset - static_cast<size_t>(n) < kHeaderBytes && !s.placed) {
      if (!pieceHeaderExpected(s.recvHeader, s.recvPiece, shape_.slotBytes))
        fail("the byte stream is out of step (corrupt header)", 0);
      // A piece that came before on a socket since lost, and again here:
      // read and checked as the stream demands, then dropped.
      s.duplicate = moved_ && (s.recvPiece < recvConsumed_ ||
                               recvDone_[s.recvPiece % shape_.slots] != 0);
      if (s.duplicate) {
        s.placed = true;
        s.scratch.resize(shape_.slotBytes);
      } else {
        learnHeader(s.recvPiece, s.recvHeader.length);
      }
    }
    if (s.recvOffset < kHeaderBytes ||
        s.recvOffset < kHeaderBytes + s.recvHeader.length + tag)
      continue;
    std::byte* payload = s.duplicate ? s.scratch.data() : recvSlot(s.recvPiece);
    if (s.seal && !s.seal->open(s.recvPiece, SealedFrame::Piece, &s.recvHeader,
                                payload, s.recvHeader.length, s.recvTag))
      fail(s.seal->mode() == WireProtect::Encrypt
               ? "integrity check failed: a piece was altered on the way "
                 "(MCL_WIRE_PROTECT: encrypted and authenticated)"
               : "integrity check failed: a piece was altered on the way "
                 "(MCL_WIRE_PROTECT: authenticated)",
           0);
    if (!s.duplicate) {
      const size_t slot = s.recvPiece % shape_.slots;
      recvLength_[slot] = s.recvHeader.length;
      recvDone_[slot] = 1;
    }
    s.duplicate = false;
    s.recvOffset = 0;
    s.placed = false;
    advance(s.recvLanes, s.recvPiece, &s.recvPiece);
  }
  return moved;
}

void TcpConnection::progress() {
  if (!linkDown_.empty()) watchLinks();
  if (offered_.load(std::memory_order_relaxed) || !waitingOffers_.empty())
    takeOffers();
  for (Stripe& s : stripes_) pushStripe(s);
  if (moved_) {
    // Lanes may sit anywhere: every socket is looked at, and a move that
    // waited on a lost socket's last frames is tried again.
    for (Stripe& s : stripes_) {
      if (s.moveWaits &&
          !takeMove(s, static_cast<size_t>(&s - stripes_.data())))
        continue;
      pullStripe(s);
    }
  } else {
    // The sender writes pieces in order, round the sockets: while the next
    // header due (the first piece whose header is not in) has not come, no
    // later one has either, most likely. Only its socket and those in the
    // middle of a piece (or carrying bytes) are read then, not every
    // socket: for a small message, one system call per look instead of one
    // per socket (with two sockets, 8-10% off a 2-rank 8 B-4 KiB
    // all-reduce). Once bytes come, every socket is read; and once after
    // each of a stalled wait's looks at the links (linkTrouble), in case
    // that header never comes (its cable was lost, and a move on another
    // socket says so).
    const size_t first = startsKnown_ % residues_;
    bool moved = pullStripe(stripes_[first]) || stripes_[first].closed;
    const bool look = fullLookDue_;
    fullLookDue_ = false;
    // The piece the caller takes next is whole: the other sockets are read
    // at its next look, not now (at the end of a small message they hold
    // nothing, and the read would cost as much as the message's own).
    if (!look && recvDone_[recvConsumed_ % shape_.slots] != 0) moved = false;
    for (size_t i = 0; i < stripes_.size(); ++i)
      if (look || (i != first && (moved || stripes_[i].recvOffset != 0 ||
                                  !stripes_[i].carry.empty())))
        moved |= pullStripe(stripes_[i], look);
  }
  while (sendFlushed_ < sendCommitted_ &&
         sendWritten_[sendFlushed_ % shape_.slots] != 0)
    ++sendFlushed_;
}

bool TcpConnection::slotFree() {
  gateShut_ = sendCommitted_ - sendReleased_ >= shape_.slots;
  if (!gateShut_) return true;
  // Pieces still to write go out first (none is released before); those
  // written may have been acknowledged since: the kernel says. A small
  // message's slots are all written: no progress() (two or three system
  // calls) on its way, only the kernel's count of each socket.
  if (sendFlushed_ < sendCommitted_) {
    progress();
    releaseSlots(false);
    if (sendCommitted_ - sendReleased_ < shape_.slots) return true;
  }
  releaseSlots(true);
  gateShut_ = sendCommitted_ - sendReleased_ >= shape_.slots;
  return !gateShut_;
}

std::span<std::byte> TcpConnection::acquireSend(size_t maxBytes) {
  if (!slotFree()) return {};
  return {sendSlot(sendCommitted_),
          std::min<size_t>(maxBytes, shape_.slotBytes)};
}

size_t TcpConnection::sendFrom(const std::byte* data, size_t bytes) {
  if (!slotFree()) return 0;
  size_t n = std::min<size_t>(bytes, shape_.slotBytes);
  const size_t slot = sendCommitted_ % shape_.slots;
  sendExternal_[slot] = data;
  externalUpTo_ = sendCommitted_ + 1;
  sendWritten_[slot] = 0;
  sendCipher_[slot] = 0;
  sendLength_[slot] = static_cast<uint32_t>(n);
  ++sendCommitted_;
  progress();
  return n;
}

void TcpConnection::commitSend(size_t bytes) {
  sendExternal_[sendCommitted_ % shape_.slots] = nullptr;
  sendWritten_[sendCommitted_ % shape_.slots] = 0;
  sendCipher_[sendCommitted_ % shape_.slots] = 0;
  sendLength_[sendCommitted_ % shape_.slots] = static_cast<uint32_t>(bytes);
  ++sendCommitted_;
  progress();  // out at once: latency is what small messages are about
}

std::span<const std::byte> TcpConnection::peekRecv() {
  if (broken_) return {};  // what came after a failure is not to be read
  const size_t slot = recvConsumed_ % shape_.slots;
  if (recvDone_[slot] == 0) {
    progress();
    if (recvDone_[slot] == 0) return {};
  }
  return {recvPayload(recvConsumed_) + recvOffset_,
          recvLength_[slot] - recvOffset_};
}

void TcpConnection::releaseRecv(size_t bytes) {
  const size_t slot = recvConsumed_ % shape_.slots;
  recvOffset_ += static_cast<uint32_t>(bytes);
  bytesReleased_ += bytes;
  if (recvOffset_ < recvLength_[slot]) return;
  recvOffset_ = 0;
  recvDone_[slot] = 0;
  recvDirect_[slot] = nullptr;
  ++recvConsumed_;
}

}  // namespace mcl::transport::tcp
