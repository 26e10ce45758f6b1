// A TCP connection reads whole pieces that fall inside a posted receive
// straight into the caller's memory (postRecv), and everything else into
// its slots, with the same bytes either way; a post withdrawn while a piece
// it received is still unread (the call failed) breaks the connection,
// saying why. On an idle socket it reads a piece's header and payload in
// one call, carrying whatever came past the piece (the next pieces, a
// farewell) to the reads that follow. Two connections joined by Unix
// stream socket pairs, two stripes each, so pieces arrive out of order
// across sockets.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "transports/tcp/tcp_connection.h"

namespace mcl::transport::tcp {
namespace {

constexpr TcpSlots kShape{4, 1024};

struct Pair {
  std::unique_ptr<TcpConnection> sender;
  std::unique_ptr<TcpConnection> receiver;
};

Pair connectedPair(size_t stripes, WireProtect protect = WireProtect::None) {
  std::vector<ProvenSocket> a, b;
  for (size_t i = 0; i < stripes; ++i) {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    for (int fd : fds) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    SessionKeys keys;
    keys.send.fill(7);
    keys.receive.fill(7);
    a.push_back({platform::Socket(fds[0]), keys});
    b.push_back({platform::Socket(fds[1]), keys});
  }
  Pair p;
  p.sender =
      std::make_unique<TcpConnection>(1, std::move(a), kShape, "test link",
                                      protect, PieceCipher::ChaCha20Poly1305);
  p.receiver =
      std::make_unique<TcpConnection>(0, std::move(b), kShape, "test link",
                                      protect, PieceCipher::ChaCha20Poly1305);
  return p;
}

std::vector<std::byte> pattern(size_t bytes, int seed) {
  std::vector<std::byte> v(bytes);
  for (size_t i = 0; i < bytes; ++i)
    v[i] = static_cast<std::byte>((i * 31 + static_cast<size_t>(seed)) & 0xff);
  return v;
}

// Sends `data` in pieces of at most `piece` bytes (the window allowing).
void sendAll(TcpConnection& c, const std::vector<std::byte>& data, size_t piece,
             size_t* sent) {
  while (*sent < data.size()) {
    const size_t n =
        c.sendFrom(data.data() + *sent, std::min(piece, data.size() - *sent));
    if (n == 0) return;
    *sent += n;
  }
}

struct Received {
  std::vector<std::byte> bytes;
  size_t pieces = 0;
  size_t inPlace = 0;  // peeked at their place in `dst`
};

// Reads `bytes` from the receiver into dst, copying what it peeks unless
// it is there already; `feed` runs before each look.
template <typename Feed>
Received receive(TcpConnection& receiver, std::byte* dst, size_t bytes,
                 Feed feed) {
  Received r;
  for (int spins = 0; r.bytes.size() < bytes && spins < 1'000'000; ++spins) {
    feed();
    const std::span<const std::byte> in = receiver.peekRecv();
    if (in.empty()) continue;
    const size_t n = std::min(in.size(), bytes - r.bytes.size());
    std::byte* place = dst + r.bytes.size();
    ++r.pieces;
    if (in.data() == place)
      ++r.inPlace;
    else
      std::copy(in.data(), in.data() + n, place);
    r.bytes.insert(r.bytes.end(), place, place + n);
    receiver.releaseRecv(n);
  }
  return r;
}

// Moves `data` from sender to receiver (from byte *sent on), reading
// `bytes` of it into dst.
Received move(Pair& p, const std::vector<std::byte>& data, size_t piece,
              std::byte* dst, size_t bytes, size_t* sent) {
  return receive(*p.receiver, dst, bytes, [&] {
    sendAll(*p.sender, data, piece, sent);
    p.sender->progress();
  });
}

TEST(TcpDirectReceive, PiecesInsideThePostLandInTheCallersMemory) {
  Pair p = connectedPair(2);
  const std::vector<std::byte> data = pattern(10 * 1024, 1);
  std::vector<std::byte> dst(data.size());
  p.receiver->postRecv(dst.data(), dst.size());
  size_t sent = 0;
  const Received r = move(p, data, 1024, dst.data(), dst.size(), &sent);
  p.receiver->withdrawRecv();
  EXPECT_EQ(r.bytes, data);
  EXPECT_EQ(dst, data);
  EXPECT_EQ(r.pieces, 10u);
  EXPECT_EQ(r.inPlace, 10u) << "every piece was read straight into dst";
  EXPECT_TRUE(p.receiver->peerAlive());
}

TEST(TcpDirectReceive, PiecesReadBeforeThePostComeFromTheSlots) {
  Pair p = connectedPair(2);
  const std::vector<std::byte> data = pattern(6 * 1024, 2);
  size_t sent = 0;
  // Two pieces are in the receiver's slots before anybody posts.
  sendAll(*p.sender, data, 1024, &sent);
  for (int i = 0; i < 1000; ++i) {
    p.sender->progress();
    p.receiver->progress();
  }
  std::vector<std::byte> dst(data.size());
  p.receiver->postRecv(dst.data(), dst.size());
  const Received r = move(p, data, 1024, dst.data(), dst.size(), &sent);
  p.receiver->withdrawRecv();
  EXPECT_EQ(r.bytes, data);
  // The four slots held the first four pieces; the last two came straight.
  EXPECT_EQ(r.inPlace, 2u);
  EXPECT_TRUE(p.receiver->peerAlive());
}

TEST(TcpDirectReceive, APieceReachingPastThePostGoesToItsSlot) {
  Pair p = connectedPair(1);
  const std::vector<std::byte> data = pattern(3 * 1000, 3);
  // The post ends inside the third piece: it goes to its slot, and the
  // next reader finds its bytes there.
  std::vector<std::byte> dst(2500);
  p.receiver->postRecv(dst.data(), dst.size());
  size_t sent = 0;
  const Received first = move(p, data, 1000, dst.data(), dst.size(), &sent);
  p.receiver->withdrawRecv();
  EXPECT_EQ(first.inPlace, 2u);
  std::vector<std::byte> rest(500);
  const Received second = move(p, data, 1000, rest.data(), rest.size(), &sent);
  std::vector<std::byte> all = first.bytes;
  all.insert(all.end(), second.bytes.begin(), second.bytes.end());
  EXPECT_EQ(all, data);
  EXPECT_TRUE(p.receiver->peerAlive());
}

TEST(TcpDirectReceive, UnderWireProtectionPiecesAreCheckedInTheirSlots) {
  Pair p = connectedPair(2, WireProtect::Mac);
  const std::vector<std::byte> data = pattern(4 * 1024, 4);
  std::vector<std::byte> dst(data.size());
  p.receiver->postRecv(dst.data(), dst.size());
  size_t sent = 0;
  const Received r = move(p, data, 1024, dst.data(), dst.size(), &sent);
  p.receiver->withdrawRecv();
  EXPECT_EQ(r.bytes, data);
  EXPECT_EQ(r.inPlace, 0u);
}

TEST(TcpDirectReceive, AWithdrawnPostWithAPieceUnreadBreaksTheConnection) {
  Pair p = connectedPair(1);
  const std::vector<std::byte> data = pattern(2048, 5);
  std::vector<std::byte> dst(data.size());
  p.receiver->postRecv(dst.data(), dst.size());
  size_t sent = 0;
  sendAll(*p.sender, data, 1024, &sent);
  for (int i = 0; i < 1000; ++i) {
    p.sender->progress();
    p.receiver->progress();
  }
  // The call that posted failed before it read its pieces: they are in
  // memory the caller may free now, and cannot be read any more.
  p.receiver->withdrawRecv();
  EXPECT_FALSE(p.receiver->peerAlive());
  EXPECT_TRUE(p.receiver->peekRecv().empty());
  EXPECT_NE(p.receiver->peerGoneReason().find("a call failed while a piece"),
            std::string::npos)
      << p.receiver->peerGoneReason();
}

// A receiver on raw socket pairs, its peer's ends written by hand.
struct RawPeer {
  std::vector<int> ends;
  std::unique_ptr<TcpConnection> receiver;

  explicit RawPeer(size_t stripes) {
    std::vector<ProvenSocket> sockets;
    for (size_t i = 0; i < stripes; ++i) {
      int fds[2];
      EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
      fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
      ends.push_back(fds[0]);
      sockets.push_back({platform::Socket(fds[1]), SessionKeys{}});
    }
    receiver = std::make_unique<TcpConnection>(3, std::move(sockets), kShape,
                                               "cable en5", WireProtect::None,
                                               PieceCipher::ChaCha20Poly1305);
  }
  ~RawPeer() {
    for (int fd : ends) close(fd);
  }
  // Piece `piece` (on socket piece % stripes) carrying `payload`.
  void send(uint32_t piece, std::span<const std::byte> payload) {
    const PieceHeader header{static_cast<uint32_t>(payload.size()), piece};
    std::vector<std::byte> frame(sizeof header);
    memcpy(frame.data(), &header, sizeof header);
    frame.insert(frame.end(), payload.begin(), payload.end());
    EXPECT_EQ(write(ends[piece % ends.size()], frame.data(), frame.size()),
              static_cast<ssize_t>(frame.size()));
  }
};

TEST(TcpDirectReceive, PiecesArrivingOutOfOrderFindTheirPlaces) {
  // Piece 1 (second socket) is in before piece 0 (first socket): where it
  // starts is known only once piece 0's header is.
  RawPeer peer(2);
  const std::vector<std::byte> data = pattern(1000 + 600, 7);
  std::vector<std::byte> dst(data.size());
  peer.receiver->postRecv(dst.data(), dst.size());
  peer.send(1, std::span(data).subspan(1000));
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(peer.receiver->peekRecv().empty());
  peer.send(0, std::span(data).first(1000));
  const Received r = receive(*peer.receiver, dst.data(), dst.size(), [] {});
  peer.receiver->withdrawRecv();
  EXPECT_EQ(r.bytes, data);
  EXPECT_EQ(r.inPlace, 2u);
  EXPECT_TRUE(peer.receiver->peerAlive());
}

TEST(TcpDirectReceive, APostThatEndedHoldsNoPieceBack) {
  // The post covered piece 0 only; piece 2 (same socket) and piece 1 come
  // after it and go to their slots at once, start known or not.
  RawPeer peer(2);
  const std::vector<std::byte> data = pattern(300, 8);
  std::vector<std::byte> dst(100);
  peer.receiver->postRecv(dst.data(), dst.size());
  peer.send(0, std::span(data).first(100));
  peer.send(2, std::span(data).subspan(200, 100));
  const Received first = receive(*peer.receiver, dst.data(), 100, [] {});
  EXPECT_EQ(first.inPlace, 1u);
  // Piece 2 was read whole into its slot, not held on its socket.
  int unread = -1;
  ASSERT_EQ(ioctl(peer.receiver->socketFd(0), FIONREAD, &unread), 0);
  EXPECT_EQ(unread, 0);
  peer.send(1, std::span(data).subspan(100, 100));
  std::vector<std::byte> rest(200);
  const Received second = receive(*peer.receiver, rest.data(), 200, [] {});
  peer.receiver->withdrawRecv();
  std::vector<std::byte> got = first.bytes;
  got.insert(got.end(), second.bytes.begin(), second.bytes.end());
  EXPECT_EQ(got, data);
  EXPECT_TRUE(peer.receiver->peerAlive());
}

TEST(TcpWholeReads, BytesPastAPieceAreTheNextPiecesInOrder) {
  // Five small pieces and a farewell are all on the one socket before the
  // receiver looks: its first read takes a piece and what follows (up to a
  // slot's bytes), the rest is carried, read in order, and the farewell
  // comes last, after every piece.
  Pair p = connectedPair(1);
  const std::vector<std::byte> data = pattern(5 * 100, 6);
  size_t sent = 0;
  sendAll(*p.sender, data, 100, &sent);
  ASSERT_EQ(sent, data.size());
  p.sender->sayFarewell("the sender is done");
  // While a piece is owed, the farewell behind it does not count yet.
  std::vector<std::byte> dst(data.size());
  const Received r = receive(*p.receiver, dst.data(), dst.size(),
                             [&] { EXPECT_TRUE(p.receiver->peerAlive()); });
  EXPECT_EQ(r.bytes, data);
  for (int i = 0; i < 100 && p.receiver->peerAlive(); ++i)
    p.receiver->progress();
  EXPECT_FALSE(p.receiver->peerAlive());
  EXPECT_EQ(p.receiver->peerGoneReason(), "the sender is done");
}

TEST(TcpWholeReads, AFarewellFirstIsReadWhole) {
  Pair p = connectedPair(2);
  p.sender->sayFarewell("gave up before sending anything");
  for (int i = 0; i < 100 && p.receiver->peerAlive(); ++i)
    p.receiver->progress();
  EXPECT_FALSE(p.receiver->peerAlive());
  EXPECT_EQ(p.receiver->peerGoneReason(), "gave up before sending anything");
}

// A peer that sent pieces, said farewell and closed: our next send fails
// (the socket is gone), and the farewell behind the unread pieces still
// says why, under wire protection too, where its tag is checked against
// its place on the socket.
void farewellBehindUnreadPieces(WireProtect protect, size_t readFirst) {
  Pair p = connectedPair(2, protect);
  const std::vector<std::byte> data = pattern(3 * 100, 4);
  size_t sent = 0;
  sendAll(*p.sender, data, 100, &sent);
  ASSERT_EQ(sent, data.size());
  for (int i = 0; i < 10; ++i) p.sender->progress();
  std::vector<std::byte> dst(data.size());
  if (readFirst > 0) {
    const Received r = receive(*p.receiver, dst.data(), readFirst, [&] {});
    ASSERT_EQ(r.bytes.size(), readFirst);
  }
  p.sender->sayFarewell("rank 1/2 gave up: waiting for rank 0");
  p.sender.reset();  // closes its sockets
  const std::vector<std::byte> reply = pattern(100, 5);
  try {
    for (int i = 0; i < 100; ++i) {
      p.receiver->sendFrom(reply.data(), reply.size());
      p.receiver->progress();
    }
    FAIL() << "sending to a closed peer went on";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "after it said: rank 1/2 gave up: waiting for rank 0"),
              std::string::npos)
        << e.what();
  }
}

TEST(TcpFarewellBehind, FoundBehindUnreadPieces) {
  farewellBehindUnreadPieces(WireProtect::None, 0);
  farewellBehindUnreadPieces(WireProtect::None, 100);
}

TEST(TcpFarewellBehind, FoundAndCheckedUnderWireProtection) {
  for (WireProtect protect : {WireProtect::Mac, WireProtect::Encrypt}) {
    farewellBehindUnreadPieces(protect, 0);
    farewellBehindUnreadPieces(protect, 100);
  }
}

TEST(TcpWholeReads, AHeaderOutOfStepIsRefusedNamingThePeer) {
  // A header announcing piece 7 where piece 0 is due, and its bytes.
  RawPeer peer(1);
  const std::vector<std::byte> payload = pattern(16, 9);
  peer.send(7, payload);
  try {
    for (int i = 0; i < 100; ++i) peer.receiver->progress();
    FAIL() << "a header out of step was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("rank 3 over cable en5: the byte "
                                         "stream is out of step"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace mcl::transport::tcp
