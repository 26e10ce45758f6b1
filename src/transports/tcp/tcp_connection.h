// A connection to a peer over TCP: the same slot discipline as shared
// memory (each committed piece fills one slot, whole elements), with the
// pieces striped over several sockets, on one or more links (cables): piece
// k travels on socket k % sockets, each preceded by an 8-byte header
// {length, piece index}. Under MCL_WIRE_PROTECT's mac or encrypt a 16-byte
// tag follows each piece (piece_seal.h), and a piece whose tag fails is an
// integrity error naming the peer and the link. All I/O is non-blocking and
// driven by the calls of the operation in progress (busy-polling while an
// operation runs).
//
// A socket lost mid-job (its cable went down, or it acknowledges nothing,
// while another link to the peer still carries) does not end the
// connection: its pieces go on over a socket that remains (failOver).
//   - A slot is used again only once the peer's kernel acknowledged its
//     piece (platform::bytesNotAcknowledged), not once it was written: what
//     was acknowledged on the lost socket can still be read at the far end;
//     everything after it is still here to send again. A piece sent from
//     the caller's memory and unacknowledged when the operation ends is
//     copied into its slot (releaseCallerMemory).
//   - The pieces of one residue (index % sockets) form a lane; a socket
//     carries its lanes merged in index order. The sender writes a move on
//     a surviving socket ("residue r comes here from piece R; the lost
//     socket holds nothing from P on"); from that point both ends count
//     that lane on the new socket. The receiver reads the lost socket up to
//     P, drops any piece it already holds, and takes the rest as it comes.
//   - The last cable lost (tcp_standby.cpp): where init made a standby
//     socket over the path it would choose without the cables (the LAN),
//     every lane moves there, under that path's protection, and back to
//     its cable when the cable is taken back.
//   - A cable that comes back (tcp_rejoin.cpp): a thread of TcpSockets
//     makes (or accepts) a new socket over it and offers it; the connection
//     takes it in place of the old one once that one is read to its end,
//     and each end moves the lanes of that socket's residue back with a
//     move that loses nothing ("residue r comes here from piece R"): the
//     socket that carried the lane carries it up to R. The lanes of
//     cables still lost that the standby carries move onto it as well.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "platform/socket.h"
#include "transports/tcp/link_silence.h"
#include "transports/tcp/piece_seal.h"
#include "transports/tcp/tcp_handshake.h"
#include "transports/transport.h"

namespace mcl::transport::tcp {

struct TcpSlots {
  uint32_t slots = 8;
  uint32_t slotBytes = 128 * 1024;
};

// The 8 bytes before each piece on a socket, in host byte order (both ends
// run the same build on little-endian CPUs).
struct PieceHeader {
  uint32_t length;
  uint32_t piece;  // the low 32 bits of the piece's index
};
// Whether a header read from a socket announces the piece that socket must
// carry next, with a length that fills at most one slot; anything else
// means the byte stream is out of step.
bool pieceHeaderExpected(const PieceHeader& header, uint64_t piece,
                         uint32_t slotBytes);

// In place of a piece header: a farewell (Connection::sayFarewell), then
// kFarewellTextBytes of NUL-padded text, and nothing more on that socket.
// No piece is ever that long.
constexpr uint32_t kFarewellLength = 0xffffffffu;
constexpr size_t kFarewellTextBytes = 248;
// In place of a piece header: a move (see above). The header's piece field
// holds the residue that moves; kMoveBytes follow: the piece it moves from
// (u64), where the lost socket's stream ends (u64: the end of its last
// frame that the peer's kernel acknowledged; kNoPiece for a lane going back
// to a socket taken back, where nothing is lost), the piece the lane ends
// before (u64; kNoPiece: it goes on), the socket it leaves (u32) and 4
// bytes of zeros; then, protected, its tag.
constexpr uint32_t kMoveLength = 0xfffffffeu;
constexpr size_t kMoveBytes = 32;
constexpr uint64_t kNoPiece = UINT64_MAX;

class FarewellScan;  // farewell_scan.h

class TcpConnection final : public Connection {
 public:
  // sockets: connected, non-blocking, in stripe order (both sides agree),
  // with their session keys; protect: None, Mac or Encrypt.
  // stripeLinks: the link each socket rides, by name (link_silence.h);
  // empty: links are not watched for silence.
  TcpConnection(int peerRank, std::vector<ProvenSocket> sockets,
                const TcpSlots& shape, std::string linkDescription,
                WireProtect protect, PieceCipher cipher,
                std::vector<std::string> stripeLinks = {});

  std::span<std::byte> acquireSend(size_t maxBytes) override;
  void commitSend(size_t bytes) override;
  std::span<const std::byte> peekRecv() override;
  void releaseRecv(size_t bytes) override;
  bool peerAlive() const override;
  // Why the peer is out of reach: its farewell, or what tend() found.
  std::string peerGoneReason() const override;
  void sayFarewell(const std::string& reason) override;
  const char* linkName() const override { return link_.c_str(); }
  std::string linkTrouble() override;
  size_t sendFrom(const std::byte* data, size_t bytes) override;
  bool sendsFromCallerMemory() const override { return true; }
  void postRecv(std::byte* dst, size_t bytes) override;
  void withdrawRecv() override;
  void progress() override;
  bool drained() const override { return sendFlushed_ == sendCommitted_; }
  void releaseCallerMemory() override;
  // Its links looked at (the watch's word, silence), and what a lost one
  // carried sent again (tcp_standby.cpp).
  void tend() override;
  // Before a normal close: waits (at most a second) until the peer's kernel
  // holds every piece, giving up lost cables meanwhile, so that what the
  // last operation sent is not stranded on a cable lost just after it.
  void finish() override;
  WireProtect protection() const { return protect_; }
  uint64_t bytesHandedOver() const override {
    return bytesWritten_.load(std::memory_order_relaxed);
  }
  // What the kernel sent again on this connection's sockets (their
  // retransmissions), in bytes; 0 where the system cannot say.
  uint64_t bytesResent() const;
  // Sockets this end stopped sending on (failOver), and the bytes of
  // pieces it sent again elsewhere for them.
  uint64_t socketsLost() const {
    return socketsLost_.load(std::memory_order_relaxed);
  }
  uint64_t bytesMoved() const {
    return bytesMoved_.load(std::memory_order_relaxed);
  }
  // Sockets given up that a new one has taken the place of (a cable back).
  uint64_t socketsRegained() const {
    return socketsRegained_.load(std::memory_order_relaxed);
  }
  // The sockets given up now, a bit each in stripe order: read by the
  // thread that makes new ones (any thread).
  uint64_t givenUpStripes() const {
    return givenUp_.load(std::memory_order_relaxed);
  }
  // A new socket for stripe `stripe`, over the same link, from any thread:
  // taken at the next progress() once the old socket is read to its end
  // (tcp_rejoin.cpp). An offer for a socket that is not given up waits.
  void offerSocket(size_t stripe, ProvenSocket socket);
  // The end that made the new sockets (the connecting rank) moves its lanes
  // back to one only once the other end's first move has come on it: then
  // both ends have it in place of the old one, and a move naming it means
  // the same socket at both.
  void movesBackSecond() { movesBackSecond_ = true; }
  // Before the connection is used: a socket over the path init would
  // choose without the cables (tcp_standby.cpp), idle until every cable is
  // lost; protect: that path's protection; link: its name ("lan lan0
  // 10.78.0.1 -> lan0 10.78.0.2"). Where the system says what the peer's
  // kernel acknowledged (else it is dropped: nothing could move to it).
  void addStandby(ProvenSocket socket, WireProtect protect, std::string link);
  bool hasStandby() const { return stripes_.size() > residues_; }
  // Every cable's sockets given up, the standby carrying everything.
  bool onStandbyAlone() const;
  // Called when the connection is destroyed (whoever offers sockets lets
  // go of it then).
  void whenGone(std::function<void()> gone) { gone_ = std::move(gone); }
  ~TcpConnection() override {
    if (gone_) gone_();
  }
  // The cable watch's word on each socket's link (true: down), in stripe
  // order; a socket whose link goes down is given up (failOver) where
  // another link remains.
  void followLinkStates(
      std::vector<std::shared_ptr<const std::atomic<bool>>> down);
  // Whether a wait on this connection must look again soon by itself: its
  // slots wait for acknowledgements, which wake no poll().
  bool awaitsAcknowledgement() const {
    return !broken_ && gateShut_ && sendFlushed_ == sendCommitted_;
  }
  // For the waker: each socket and whether it has bytes to write.
  size_t socketCount() const { return stripes_.size(); }
  // Bytes written to socket i since it was made (or taken in).
  uint64_t bytesSentOn(size_t i) const { return stripes_[i].bytesOut; }
  int socketFd(size_t i) const { return stripes_[i].socket.fd(); }
  bool wantsWrite(size_t i) const;
  // Whether progress() would read socket i now, with nothing coming (the
  // waker sleeps on those only): it has a slot to read into, and carries
  // the next header due or is in the middle of a piece that knows its
  // place.
  bool wantsRead(size_t i) const;

 private:
  // The pieces of one residue that a socket carries, in one direction:
  // from `start` (where they moved there), `next` the next one, up to (not
  // including) `end` (where they moved away).
  struct Lane {
    uint64_t start;
    uint64_t next;
    uint64_t end = kNoPiece;
  };
  struct Stripe {
    platform::Socket socket;
    // Sending: the piece being written and how much of header+payload went.
    uint64_t sendPiece;
    size_t sendOffset = 0;
    // Receiving: the piece being read, its header, and bytes read so far.
    uint64_t recvPiece;
    PieceHeader recvHeader{};
    size_t recvOffset = 0;
    bool farewell = false;  // the header read announced a farewell
    bool placed = false;    // placePayload decided where the payload goes
    // The socket had nothing at the last look: the next bytes most likely
    // start one message, read with its header in one call (readWhole).
    bool idle = true;
    // The last read from the socket took less than it asked: the kernel had
    // nothing more then, and one more read now would only say so.
    bool drained = false;
    // Bytes that call read past its piece: the next ones of this socket,
    // taken before the socket's own (readStripe).
    std::vector<std::byte> carry;
    size_t carryAt = 0;
    bool closed = false;  // the peer closed its end or said farewell
    // Under mac or encrypt: the socket's keys, the tag of the piece being
    // sent (sealed once, when its first byte goes) and of the one read.
    std::unique_ptr<PieceSeal> seal;
    bool sendSealed = false;
    PieceTag sendTag{};
    PieceTag recvTag{};
    // The lanes it carries each way; sendPiece and recvPiece are the
    // smallest next piece among them (kNoPiece: none).
    std::vector<Lane> sendLanes;
    std::vector<Lane> recvLanes;
    // Bytes written to the socket (every frame), and of those the ones the
    // peer's kernel acknowledged, at the last look; where frames written
    // since end in the byte stream, and the last acknowledged end.
    uint64_t bytesOut = 0;
    uint64_t acked = 0;
    std::vector<uint64_t> frameEnds;
    uint64_t ackedFrameEnd = 0;
    // This end sends nothing more on it (failOver).
    bool sendLost = false;
    // Moves to write before the next piece, whole frames, and the lanes
    // they bring, taken up once the last byte of them is written.
    std::vector<std::byte> control;
    size_t controlAt = 0;
    std::vector<size_t> controlEnds;  // each move's end in `control`
    std::vector<Lane> lanesAfterControl;
    // Receiving: the bytes of the stream taken so far; the header read
    // announced a move, whose body is read here (moveWaits: whole and
    // checked, it waits for the lost socket to be read to its end); the
    // piece being read is held already (read, checked, dropped); nothing
    // is read past recvLimit (the peer lost this socket there).
    uint64_t bytesIn = 0;
    bool move = false;
    bool moveWaits = false;
    std::array<std::byte, kMoveBytes> moveBody{};
    bool duplicate = false;
    // Where a duplicate piece and a farewell's text are read: the stripe's
    // own, since another stripe's may be half read at the same time (after
    // a loss every socket is read, a frame at a time as it comes).
    std::vector<std::byte> scratch;
    std::array<char, kFarewellTextBytes> farewellText{};
    uint64_t recvLimit = kNoPiece;
    // Taken back (adopt): nothing comes on it but moves, until the first.
    bool awaitsMove = false;
    // The standby (addStandby): a move may come on it whenever it carries
    // nothing.
    bool standby = false;
    // Moves sealed for it and read from it: each move's nonce.
    uint64_t movesOut = 0;
    uint64_t movesIn = 0;
    std::shared_ptr<const std::atomic<bool>> linkDown;
  };

  std::byte* sendSlot(uint64_t piece) const;
  std::byte* recvSlot(uint64_t piece) const;
  // Where the piece's payload is read to and peeked from: the caller's
  // memory for a piece read straight there (postRecv), else its slot.
  std::byte* recvPayload(uint64_t piece) const;
  // A piece's header is in: learns where each piece starts in the byte
  // stream (known in piece order, whatever the order of the sockets).
  void learnHeader(uint64_t piece, uint32_t length);
  // Before a piece's first payload byte: whether it is read into the
  // posted memory (recvPayload); false while a post waits to learn where
  // the piece starts.
  bool placePayload(uint64_t piece);
  // The stripe's piece has its header in and waits to learn where it goes.
  bool waitsForPlace(const Stripe& s) const;
  void pushStripe(Stripe& s);
  // Writes what is left of the stripe's moves; true once all are out.
  bool pushControl(Stripe& s);
  // A write failed with err: the socket is given up where its pieces can
  // go elsewhere (a network error, not the peer's close), else fail().
  void sendFailed(Stripe& s, int err);
  // The piece just finished on a stripe's lanes: the next one.
  void advance(std::vector<Lane>& lanes, uint64_t piece, uint64_t* cursor,
               uint64_t limit = kNoPiece) const;
  static uint64_t nextPiece(const std::vector<Lane>& lanes, uint64_t limit);
  // The stripe that must bring piece `piece` next (its open lane).
  size_t recvOwner(uint64_t piece) const;
  // Stops sending on stripe `lost`: its lanes move to the stripes that
  // remain from the first piece its peer's kernel does not hold whole, with
  // a WARN saying why. False (nothing changed) where none remains or the
  // system cannot say what was acknowledged.
  bool failOver(size_t lost, const std::string& why);
  // failOver's steps: where the lost socket's stream ends at the far side
  // (the end of its last frame acknowledged whole; false where the system
  // cannot say); its pieces past that end marked unwritten, back in plain
  // where they were encrypted in place (returns their bytes); a move of
  // one lane written on socket `to` before its next piece; the WARN.
  bool measureCut(Stripe& lost, uint64_t* cut);
  uint64_t takeBack(size_t lost, uint64_t cut, std::vector<uint64_t>* taken);
  void queueMove(size_t to, uint64_t residue, uint64_t from, uint64_t cut,
                 size_t lost, uint64_t end = kNoPiece);
  void sayGivenUp(size_t lost, const std::string& why, const std::string& over,
                  uint64_t again) const;
  // A move is in, whole and checked: the lane it names comes on s from
  // now. False while the lost socket it names is not yet read to its end.
  bool takeMove(Stripe& s, size_t index);
  // tcp_rejoin.cpp: the offers taken in where their stripes are done with
  // (given up here, read to the end, no move waiting on them); a new
  // socket in place of the old; the lanes of its residue moved back.
  void takeOffers();
  bool stripeDone(size_t i) const;
  void adopt(size_t i, ProvenSocket socket);
  // A socket that carries no lane yet (taken back, or the standby), its
  // pieces sealed under `protect` with its own keys.
  Stripe idleStripe(ProvenSocket socket, WireProtect protect) const;
  // The lanes of socket i's residue back to it, and those of cables still
  // lost off the standby (moveLane: the residue's open lane, from its
  // holder, or only from onlyFrom, to socket i).
  void moveLaneHome(size_t i);
  static constexpr size_t kAnySocket = SIZE_MAX;
  void moveLane(size_t residue, size_t i, size_t onlyFrom = kAnySocket);
  // Sockets on socket i's cable, and i's place among them.
  size_t socketsOnCable(size_t i) const;
  size_t placeOnCable(size_t i) const;
  // Whether pullStripe reads the stripe now: its next frame has a slot
  // (or is a control frame begun), and the stripe is not closed, waiting,
  // or read to its end. mayRead: that, or a move comes next (looked at
  // with MSG_PEEK where one may).
  bool readsNow(const Stripe& s) const;
  bool mayRead(Stripe& s, bool look);
  // The peer's kernel acknowledged what slots hold: they are free again.
  void releaseSlots(bool look);
  // Looks at the cable watch's word on each socket's link.
  void watchLinks();
  // Whether a slot is free for the next piece (its last piece released).
  bool slotFree();
  // Reads what the stripe has, up to the window; true if any byte came or
  // the peer closed it.
  // look: the stripe may be looked at past the window (mayRead).
  bool pullStripe(Stripe& s, bool look = false);
  // recv(2) on the stripe's socket, after the bytes it carries.
  ssize_t readStripe(Stripe& s, void* target, size_t want);
  // At a piece's start on an idle socket: its header and its payload in
  // one system call instead of two (what a small message costs most is
  // system calls), into the header and the piece's slot; whatever came
  // past the piece is carried. Returns what recvmsg returned; the bytes
  // are accounted as pullStripe's own read would.
  ssize_t readWhole(Stripe& s);
  // The stripe's farewell is in (or the peer closed during it).
  void takeFarewell(Stripe& s);
  // Seals the stripe's current piece (once) and returns where its payload
  // goes out from.
  std::byte* sealedPayload(Stripe& s, const PieceHeader& header);
  // The tag after each frame on a socket: its own protection (a standby
  // may be protected where the cables are not).
  static size_t tagBytes(const Stripe& s) {
    return s.seal ? kPieceTagBytes : 0;
  }
  // Whether the cables' sockets are protected: a piece is then checked in
  // its slot before anybody may see it (no fast path around the slot).
  bool sealed() const { return protect_ != WireProtect::None; }
  // The standby's index (residues_), where there is one; the sockets that
  // may take a lost one's lanes, in the order failOver hands them out.
  size_t standbyIndex() const { return residues_; }
  std::vector<size_t> takersFor(size_t lost) const;
  // linkTrouble's look (at most every 100 ms): silent links given up where
  // another carries; why none does ("" while one may).
  std::string lookForSilence();
  // Throws mclRemoteError; err (errno) 0: the stream is out of step.
  [[noreturn]] void fail(const char* what, int err);
  // The farewell the peer sent behind what we have read, if any (see
  // FarewellScan); reads each socket up to where it has nothing more.
  std::string farewellBehind();
  FarewellScan scanInFarewell(const Stripe& s) const;
  // A protected farewell the scan found, opened: its text, or why not.
  std::string openedFarewell(const Stripe& s, const FarewellScan& scan,
                             uint64_t stride) const;
  // "cable tb1c1 10.77.1.1 -> tb0c1 10.77.1.2": the link stripe i rides.
  std::string stripeLink(size_t i) const;

  int peerRank_;
  std::string link_;
  LinkSilence silence_;
  WireProtect protect_;
  PieceCipher cipher_;  // for sockets taken in later (adopt)
  TcpSlots shape_;
  std::vector<Stripe> stripes_;
  // The striped sockets (piece k's residue is k % residues_); a standby
  // socket (addStandby) comes after them.
  size_t residues_ = 0;
  std::vector<std::byte> sendBuffer_;
  std::vector<uint32_t> sendLength_;
  // Per slot: the caller's memory a piece goes out from, or null for the
  // slot's own buffer.
  std::vector<const std::byte*> sendExternal_;
  std::vector<std::byte> recvBuffer_;
  std::vector<uint32_t> recvLength_;
  std::vector<uint8_t> recvDone_;  // slot holds a complete piece
  uint64_t sendCommitted_ = 0;     // pieces committed
  uint64_t sendFlushed_ = 0;       // pieces fully written (in order)
  // Per slot: written to its socket (until the slot is released), which
  // one, where the piece ended in its byte stream, its tag, and which
  // stripe's keys encrypted the slot in place (0: plain; else index + 1).
  std::vector<uint8_t> sendWritten_;
  std::vector<uint32_t> sendStripe_;
  std::vector<uint64_t> sendEnd_;
  std::vector<PieceTag> sendTags_;
  std::vector<uint32_t> sendCipher_;
  // Pieces whose slots are free again: acknowledged (or, where the system
  // cannot say, written).
  uint64_t sendReleased_ = 0;
  bool ackKnown_ = false;
  bool gateShut_ = false;  // the last ask for a slot found none free
  // A lane moved (either way): the fast paths that assume piece k on
  // socket k % sockets are off.
  bool moved_ = false;
  // Past the last piece committed from the caller's memory, until
  // releaseCallerMemory copied it (0: none waits).
  uint64_t externalUpTo_ = 0;
  // Each stripe's link flag, looked at on every progress (none: not
  // followed).
  std::vector<const std::atomic<bool>*> linkDown_;
  std::vector<std::string> stripeLinks_;
  size_t nextSurvivor_ = 0;  // where failOver's next lane goes, in turn
  std::atomic<uint64_t> socketsLost_{0};
  std::atomic<uint64_t> bytesMoved_{0};
  std::atomic<uint64_t> socketsRegained_{0};
  std::atomic<uint64_t> givenUp_{0};
  // Offers from another thread (offersMutex_), and those taken that wait
  // for their stripe to be done with (this thread's).
  std::mutex offersMutex_;
  std::vector<std::pair<size_t, ProvenSocket>> offers_;
  std::atomic<bool> offered_{false};
  std::vector<std::pair<size_t, ProvenSocket>> waitingOffers_;
  std::function<void()> gone_;
  bool movesBackSecond_ = false;
  // tend(): its next look at the links' silence, and the failure it found
  // (said when a step waits on the connection: peerAlive turns false).
  std::chrono::steady_clock::time_point nextTendLook_{};
  std::string tendFailure_;
  uint64_t homeDue_ = 0;       // sockets taken back, their lanes still to move
  uint64_t recvConsumed_ = 0;  // pieces released
  uint32_t recvOffset_ = 0;    // within the current piece
  // Receiving into the caller's memory (postRecv): the stream's bytes
  // [postStart_, postEnd_) belong at postDst_. Per slot: the piece whose
  // header was read there, its length and where it starts in the stream
  // (known for every piece before startsKnown_, whose start is
  // nextStart_), and its payload's place in the caller's memory or null.
  uint64_t bytesReleased_ = 0;
  std::byte* postDst_ = nullptr;
  uint64_t postStart_ = 0;
  uint64_t postEnd_ = 0;
  std::vector<uint64_t> headerPiece_;
  std::vector<uint32_t> headerLength_;
  std::vector<uint64_t> pieceStart_;
  uint64_t startsKnown_ = 0;
  uint64_t nextStart_ = 0;
  std::vector<std::byte*> recvDirect_;
  // Since when a piece waits to learn its place (0: none waits), and how
  // long one may before it is read into its slot instead.
  int64_t placeWaitSinceNs_ = 0;
  static constexpr int64_t kLongestPlaceWaitNs = 2'000'000;
  // A wait stalled on the connection looked at its links: the next
  // progress() reads every socket, past the window too (mayRead).
  bool fullLookDue_ = false;
  bool broken_ = false;
  // Written by the thread that progresses the connection, read by any
  // (the topology dump's counters): one writer, so a relaxed store.
  std::atomic<uint64_t> bytesWritten_{0};
  bool saidFarewell_ = false;  // nothing more may be sent
  std::string peerFarewell_;   // the reason the peer gave, once in
};

}  // namespace mcl::transport::tcp
