// A TCP connection striped over two links gives up the sockets of one that
// goes down and carries on over the other (tcp_connection.h): every byte
// arrives once and in order, under every wire protection, whether the
// pieces on the lost sockets were acknowledged, written but waiting there
// (the receiver's window full), or sent from the caller's memory and let go
// at the operation's end. Real TCP sockets on the loopback: the kernel's
// acknowledgements are what the connection goes by; a receive buffer a few
// KiB small keeps bytes unacknowledged on the link that is then lost.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "transports/tcp/tcp_connection.h"

// A namespace of its own: the macOS check builds the tests in unity
// batches, where another file's helpers of the same names would meet.
namespace mcl::transport::tcp::failover_test {
namespace {

constexpr TcpSlots kShape{8, 4096};
constexpr size_t kStripes = 4;  // two sockets on each of two links

// One loopback TCP connection: {the connecting end, the accepted end}, the
// accepted end's receive buffer `receiveBuffer` bytes where not 0.
std::pair<int, int> loopbackPair(int receiveBuffer) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (receiveBuffer != 0)
    setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &receiveBuffer,
               sizeof(receiveBuffer));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  EXPECT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), length), 0);
  EXPECT_EQ(listen(listener, 1), 0);
  EXPECT_EQ(
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const int connecting = socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_EQ(connect(connecting, reinterpret_cast<sockaddr*>(&address), length),
            0);
  const int accepted = accept(listener, nullptr, nullptr);
  close(listener);
  for (int fd : {connecting, accepted})
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return {connecting, accepted};
}

struct Striped {
  std::unique_ptr<TcpConnection> sender;
  std::unique_ptr<TcpConnection> receiver;
  std::shared_ptr<std::atomic<bool>> linkBDown =
      std::make_shared<std::atomic<bool>>(false);
};

// `count` loopback connections with keys of their own, the connecting ends
// in *a and the accepted ones in *b; from the one at smallFrom on, the
// accepted ends hold `laterBuffer` bytes (0: the system's default).
void provenPairs(size_t count, int laterBuffer, std::vector<ProvenSocket>* a,
                 std::vector<ProvenSocket>* b, size_t smallFrom = 2) {
  for (size_t i = 0; i < count; ++i) {
    const auto [connecting, accepted] =
        loopbackPair(i >= smallFrom ? laterBuffer : 0);
    SessionKeys forward;
    forward.send.fill(static_cast<uint8_t>(10 + i));
    forward.receive.fill(static_cast<uint8_t>(40 + i));
    SessionKeys backward;
    backward.send = forward.receive;
    backward.receive = forward.send;
    a->push_back({platform::Socket(connecting), forward});
    b->push_back({platform::Socket(accepted), backward});
  }
}

// A cable back: a new socket pair for stripes `first` and `first + 1`,
// offered to both ends (as TcpSockets' rejoin thread does).
void offerCableBack(TcpConnection& a, TcpConnection& b, size_t first) {
  std::vector<ProvenSocket> na, nb;
  provenPairs(2, 0, &na, &nb);
  for (size_t k = 0; k < 2; ++k) {
    a.offerSocket(first + k, std::move(na[k]));
    b.offerSocket(first + k, std::move(nb[k]));
  }
}

// Link a: stripes 0 and 1; link b: 2 and 3, whose receiving ends hold
// `linkBBuffer` bytes (0: the system's default).
Striped stripedPair(WireProtect protect, int linkBBuffer) {
  std::vector<ProvenSocket> a, b;
  provenPairs(kStripes, linkBBuffer, &a, &b);
  const std::vector<std::string> links = {"cable a", "cable a", "cable b",
                                          "cable b"};
  Striped p;
  p.sender =
      std::make_unique<TcpConnection>(1, std::move(a), kShape, "test", protect,
                                      PieceCipher::ChaCha20Poly1305, links);
  p.receiver =
      std::make_unique<TcpConnection>(0, std::move(b), kShape, "test", protect,
                                      PieceCipher::ChaCha20Poly1305, links);
  const auto up = std::make_shared<std::atomic<bool>>(false);
  p.sender->followLinkStates({up, up, p.linkBDown, p.linkBDown});
  return p;
}

std::vector<std::byte> pattern(size_t bytes, int seed) {
  std::vector<std::byte> v(bytes);
  for (size_t i = 0; i < bytes; ++i)
    v[i] = static_cast<std::byte>((i * 131 + static_cast<size_t>(seed)) >> 3);
  return v;
}

// Hands the sender what it takes of data (from *sent on), from the caller's
// memory or through its slots.
void offer(TcpConnection& c, const std::vector<std::byte>& data, bool inPlace,
           size_t* sent) {
  while (*sent < data.size()) {
    const size_t want = std::min<size_t>(kShape.slotBytes, data.size() - *sent);
    if (inPlace) {
      const size_t n = c.sendFrom(data.data() + *sent, want);
      if (n == 0) return;
      *sent += n;
      continue;
    }
    const std::span<std::byte> room = c.acquireSend(want);
    if (room.empty()) return;
    std::copy_n(data.data() + *sent, room.size(), room.data());
    c.commitSend(room.size());
    *sent += room.size();
  }
}

// A loop that waits for bytes: at least `turns` turns, and past them up to
// 30 s (on a loaded machine, tiny windows move at the kernel's timers).
struct Turns {
  int i = 0;
  int turns = 400000;
  std::chrono::steady_clock::time_point since =
      std::chrono::steady_clock::now();
  bool more() const {
    return i < turns ||
           std::chrono::steady_clock::now() - since < std::chrono::seconds(30);
  }
};

// Takes what the receiver has, appending it to got. Where nothing came,
// it looks at its links now and then, as an operation's wait does
// (executor.cpp: linkTrouble about every millisecond).
void take(TcpConnection& c, std::vector<std::byte>* got) {
  // Counted per connection: with one count for both ends, a loop taking
  // from two connections in turn could give every look to the same one.
  static std::map<const TcpConnection*, int> idle;
  if (c.peekRecv().empty() && ++idle[&c] % 64 == 0) (void)c.linkTrouble();
  for (std::span<const std::byte> in = c.peekRecv(); !in.empty();
       in = c.peekRecv()) {
    got->insert(got->end(), in.begin(), in.end());
    c.releaseRecv(in.size());
  }
}

struct Case {
  WireProtect protect;
  bool inPlace;  // sendFrom (the caller's memory), else acquireSend
  bool posted;   // the receiver posts its whole buffer (postRecv)
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << (c.protect == WireProtect::None  ? "clear"
           : c.protect == WireProtect::Mac ? "mac"
                                           : "encrypt")
       << (c.inPlace ? ", from the caller's memory" : ", from slots")
       << (c.posted ? ", received in place" : "");
}

class TcpFailover : public ::testing::TestWithParam<Case> {};

TEST_P(TcpFailover, WhatALostLinkCarriedArrivesOnceAndInOrder) {
  // Link b's receiving ends hold 4 KiB: pieces striped there wait
  // unacknowledged while the receiver does not read, and are sent again on
  // link a once b is lost.
  Striped p = stripedPair(GetParam().protect, 4096);
  const std::vector<std::byte> data = pattern(96 * kShape.slotBytes, 3);
  size_t sent = 0;
  for (int i = 0; i < 2000; ++i) {
    offer(*p.sender, data, GetParam().inPlace, &sent);
    p.sender->progress();
  }
  ASSERT_GT(sent, 0u);
  ASSERT_LT(sent, data.size());
  p.linkBDown->store(true);
  // Received in place: a piece whose start is not known yet waits for the
  // headers before it, which may come behind a move.
  std::vector<std::byte> dst(data.size());
  if (GetParam().posted) p.receiver->postRecv(dst.data(), dst.size());
  std::vector<std::byte> got;
  for (int i = 0; i < 200000 && got.size() < data.size(); ++i) {
    offer(*p.sender, data, GetParam().inPlace, &sent);
    p.sender->progress();
    take(*p.receiver, &got);
  }
  if (GetParam().posted) p.receiver->withdrawRecv();
  ASSERT_EQ(got.size(), data.size());
  EXPECT_TRUE(got == data);
  EXPECT_EQ(p.sender->socketsLost(), 2u);
  EXPECT_GT(p.sender->bytesMoved(), 0u);
  // The receiver, told by the moves, sends nothing more on link b either.
  EXPECT_EQ(p.receiver->socketsLost(), 2u);
}

TEST_P(TcpFailover, PiecesLetGoOfAtTheOperationsEndGoAgainFromTheirSlots) {
  // Everything is written and the operation over: the caller's memory is
  // let go (and changed), then link b is lost with pieces still
  // unacknowledged on it.
  Striped p = stripedPair(GetParam().protect, 4096);
  const std::vector<std::byte> data =
      pattern(kShape.slots * kShape.slotBytes, 5);
  std::vector<std::byte> buffer = data;
  size_t sent = 0;
  for (int i = 0; i < 2000 && !(sent == data.size() && p.sender->drained());
       ++i) {
    offer(*p.sender, buffer, GetParam().inPlace, &sent);
    p.sender->progress();
  }
  ASSERT_EQ(sent, data.size());
  ASSERT_TRUE(p.sender->drained());
  p.sender->releaseCallerMemory();
  std::fill(buffer.begin(), buffer.end(), std::byte{0xee});
  p.linkBDown->store(true);
  std::vector<std::byte> got;
  for (int i = 0; i < 200000 && got.size() < data.size(); ++i) {
    p.sender->progress();
    take(*p.receiver, &got);
  }
  ASSERT_EQ(got.size(), data.size());
  EXPECT_TRUE(got == data);
  EXPECT_GT(p.sender->bytesMoved(), 0u);
}

TEST_P(TcpFailover, AConnectionThatLostALinkGoesOnBothWays) {
  // After the loss, traffic the other way (the receiver now sends) and a
  // second message forward use the link that remains.
  Striped p = stripedPair(GetParam().protect, 0);
  const std::vector<std::byte> first = pattern(20 * kShape.slotBytes, 7);
  const std::vector<std::byte> back = pattern(30 * kShape.slotBytes, 8);
  const std::vector<std::byte> second = pattern(25 * kShape.slotBytes + 5, 9);
  size_t sent = 0;
  std::vector<std::byte> got;
  for (int i = 0; i < 200000 && got.size() < first.size(); ++i) {
    if (i == 20) p.linkBDown->store(true);
    offer(*p.sender, first, GetParam().inPlace, &sent);
    p.sender->progress();
    take(*p.receiver, &got);
  }
  EXPECT_TRUE(got == first);
  size_t backSent = 0;
  size_t secondSent = 0;
  std::vector<std::byte> gotBack;
  std::vector<std::byte> gotSecond;
  for (int i = 0; i < 200000 && (gotBack.size() < back.size() ||
                                 gotSecond.size() < second.size());
       ++i) {
    offer(*p.receiver, back, GetParam().inPlace, &backSent);
    offer(*p.sender, second, GetParam().inPlace, &secondSent);
    p.receiver->progress();
    p.sender->progress();
    take(*p.sender, &gotBack);
    take(*p.receiver, &gotSecond);
  }
  EXPECT_TRUE(gotBack == back);
  EXPECT_TRUE(gotSecond == second);
  EXPECT_TRUE(p.sender->peerAlive());
  EXPECT_TRUE(p.receiver->peerAlive());
}

// Streams `data` each way at once (sender to receiver and back), calling
// between(i) at every turn, until both are in.
void bothWays(TcpConnection& a, TcpConnection& b,
              const std::vector<std::byte>& data, bool inPlace,
              const std::function<void(int)>& between) {
  size_t sentAB = 0;
  size_t sentBA = 0;
  std::vector<std::byte> gotAB;
  std::vector<std::byte> gotBA;
  for (Turns t;
       t.more() && (gotAB.size() < data.size() || gotBA.size() < data.size());
       ++t.i) {
    between(t.i);
    offer(a, data, inPlace, &sentAB);
    offer(b, data, inPlace, &sentBA);
    a.progress();
    b.progress();
    take(b, &gotAB);
    take(a, &gotBA);
  }
  // The sizes first: a wait cut short reads differently from bytes wrong.
  EXPECT_EQ(gotAB.size(), data.size());
  EXPECT_EQ(gotBA.size(), data.size());
  EXPECT_TRUE(gotAB == data);
  EXPECT_TRUE(gotBA == data);
}

TEST_P(TcpFailover, ALinkLostWhileBothWaysStreamIsHeardOfByOneEndOnly) {
  // Both ends stream at once when link b goes down; only the sender hears
  // it from the watch. The receiver learns it from the sender's moves, and
  // until it does it still reads and sends on b, whose socket still
  // carries (its receiving end holds 4 KiB: pieces wait there). Nothing
  // may be lost or held twice either way.
  Striped p = stripedPair(GetParam().protect, 4096);
  const std::vector<std::byte> data = pattern(20 * kShape.slotBytes + 9, 33);
  bothWays(*p.sender, *p.receiver, data, GetParam().inPlace, [&](int i) {
    if (i == 2) p.linkBDown->store(true);
  });
  EXPECT_EQ(p.sender->givenUpStripes(), 0b1100u);
  EXPECT_EQ(p.receiver->givenUpStripes(), 0b1100u);
  EXPECT_TRUE(p.sender->peerAlive());
  EXPECT_TRUE(p.receiver->peerAlive());
}

TEST_P(TcpFailover, ACableBackIsTakenUpAgainAndCarriesItsLanes) {
  // Link b is lost, then comes back: a new socket pair over it is offered
  // to both ends (as TcpSockets' rejoin thread does), each takes it once
  // its old socket is read to its end, and the lanes of b's residues go
  // back to it. Then link a is lost: everything must go over b's new
  // sockets, which shows they carry.
  Striped p = stripedPair(GetParam().protect, 0);
  const auto linkADown = std::make_shared<std::atomic<bool>>(false);
  p.sender->followLinkStates({linkADown, linkADown, p.linkBDown, p.linkBDown});
  p.receiver->followLinkStates(
      {linkADown, linkADown, p.linkBDown, p.linkBDown});
  const std::vector<std::byte> data = pattern(40 * kShape.slotBytes + 3, 5);
  bothWays(*p.sender, *p.receiver, data, GetParam().inPlace, [&](int i) {
    if (i == 2) p.linkBDown->store(true);
  });
  EXPECT_EQ(p.sender->givenUpStripes(), 0b1100u);
  EXPECT_EQ(p.receiver->givenUpStripes(), 0b1100u);
  p.linkBDown->store(false);
  // The sender plays the rank that made the new sockets: it moves its lanes
  // back once the receiver's first move on each has come.
  p.sender->movesBackSecond();
  offerCableBack(*p.sender, *p.receiver, 2);
  bothWays(*p.sender, *p.receiver, data, GetParam().inPlace, [](int) {});
  EXPECT_EQ(p.sender->givenUpStripes(), 0u);
  EXPECT_EQ(p.receiver->givenUpStripes(), 0u);
  EXPECT_EQ(p.sender->socketsRegained(), 2u);
  EXPECT_EQ(p.receiver->socketsRegained(), 2u);
  // Each end's pieces of residues 2 and 3 went back to b's new sockets
  // (10 pieces each way and socket).
  for (size_t i : {2, 3}) {
    EXPECT_GT(p.sender->bytesSentOn(i), 8 * kShape.slotBytes) << i;
    EXPECT_GT(p.receiver->bytesSentOn(i), 8 * kShape.slotBytes) << i;
  }
  bothWays(*p.sender, *p.receiver, data, GetParam().inPlace, [&](int i) {
    if (i == 2) linkADown->store(true);
  });
  EXPECT_EQ(p.sender->givenUpStripes(), 0b0011u);
  EXPECT_TRUE(p.sender->peerAlive());
  EXPECT_TRUE(p.receiver->peerAlive());
}

TEST_P(TcpFailover, TheHolderLostJustAfterALaneWentBackLosesNoPiece) {
  // Every receiving end holds 4 KiB. Link b is lost and comes back; the
  // sender takes its new sockets in and moves the lanes of b's residues
  // back from link a's sockets while the receiver reads nothing, so that
  // their last pieces on a wait there unacknowledged; then a is lost. Those
  // pieces have no lane on a any more (it ended where b took over): they
  // must still go again, over b's new sockets.
  std::vector<ProvenSocket> a, b;
  provenPairs(kStripes, 4096, &a, &b);
  const std::vector<std::string> links = {"cable a", "cable a", "cable b",
                                          "cable b"};
  TcpConnection sender(1, std::move(a), kShape, "test", GetParam().protect,
                       PieceCipher::ChaCha20Poly1305, links);
  TcpConnection receiver(0, std::move(b), kShape, "test", GetParam().protect,
                         PieceCipher::ChaCha20Poly1305, links);
  const auto linkADown = std::make_shared<std::atomic<bool>>(false);
  const auto linkBDown = std::make_shared<std::atomic<bool>>(false);
  sender.followLinkStates({linkADown, linkADown, linkBDown, linkBDown});
  receiver.followLinkStates({linkADown, linkADown, linkBDown, linkBDown});
  const std::vector<std::byte> first = pattern(20 * kShape.slotBytes, 11);
  bothWays(sender, receiver, first, GetParam().inPlace, [&](int i) {
    if (i == 2) linkBDown->store(true);
  });
  linkBDown->store(false);
  // Pieces of every residue go out on a first (b's lanes are there).
  const std::vector<std::byte> data = pattern(60 * kShape.slotBytes + 7, 12);
  size_t sent = 0;
  for (int i = 0; i < 2000; ++i) {
    offer(sender, data, GetParam().inPlace, &sent);
    sender.progress();
  }
  offerCableBack(sender, receiver, 2);
  for (int i = 0; i < 2000; ++i) {
    offer(sender, data, GetParam().inPlace, &sent);
    sender.progress();
  }
  ASSERT_EQ(sender.socketsRegained(), 2u);
  linkADown->store(true);
  std::vector<std::byte> got;
  for (Turns t; t.more() && got.size() < data.size(); ++t.i) {
    offer(sender, data, GetParam().inPlace, &sent);
    sender.progress();
    take(receiver, &got);
  }
  EXPECT_TRUE(got == data);
  EXPECT_EQ(sender.givenUpStripes(), 0b0011u);
}

TEST_P(TcpFailover, TheLastCableLostItAllGoesOverTheStandbyAndComesBack) {
  // One cable of two sockets (receiving ends of 4 KiB: pieces wait there
  // unacknowledged) and an encrypted standby beside it, as init makes over
  // a LAN. Only the sender hears the cable go down; the receiver learns it
  // from the moves. Everything must arrive once and in order over the
  // standby, then go both ways there; then the cable comes back, every
  // lane goes home (the standby carries nothing more), and when the cable
  // is lost again the standby takes it all once more.
  std::vector<ProvenSocket> a, b, sa, sb;
  provenPairs(2, 4096, &a, &b, 0);
  provenPairs(1, 0, &sa, &sb);
  const std::vector<std::string> links = {"cable a", "cable a"};
  TcpConnection sender(1, std::move(a), kShape, "test", GetParam().protect,
                       PieceCipher::ChaCha20Poly1305, links);
  TcpConnection receiver(0, std::move(b), kShape, "test", GetParam().protect,
                         PieceCipher::ChaCha20Poly1305, links);
  sender.addStandby(std::move(sa[0]), WireProtect::Encrypt, "lan x");
  receiver.addStandby(std::move(sb[0]), WireProtect::Encrypt, "lan x");
  ASSERT_TRUE(sender.hasStandby());
  const auto down = std::make_shared<std::atomic<bool>>(false);
  sender.followLinkStates({down, down});
  const std::vector<std::byte> data = pattern(60 * kShape.slotBytes + 9, 21);
  size_t sent = 0;
  for (int i = 0; i < 2000; ++i) {
    offer(sender, data, GetParam().inPlace, &sent);
    sender.progress();
  }
  ASSERT_LT(sent, data.size());
  down->store(true);
  std::vector<std::byte> dst(data.size());
  if (GetParam().posted) receiver.postRecv(dst.data(), dst.size());
  std::vector<std::byte> got;
  for (Turns t; t.more() && got.size() < data.size(); ++t.i) {
    offer(sender, data, GetParam().inPlace, &sent);
    sender.progress();
    take(receiver, &got);
  }
  if (GetParam().posted) receiver.withdrawRecv();
  ASSERT_TRUE(got == data);
  EXPECT_EQ(sender.givenUpStripes(), 0b11u);
  EXPECT_GT(sender.bytesMoved(), 0u);
  const std::vector<std::byte> more = pattern(30 * kShape.slotBytes + 1, 22);
  bothWays(sender, receiver, more, GetParam().inPlace, [](int) {});
  EXPECT_EQ(receiver.givenUpStripes(), 0b11u);
  EXPECT_GT(receiver.bytesSentOn(2), 20 * kShape.slotBytes);
  // The cable back: new sockets offered to both ends.
  down->store(false);
  sender.movesBackSecond();
  offerCableBack(sender, receiver, 0);
  bothWays(sender, receiver, more, GetParam().inPlace, [](int) {});
  EXPECT_EQ(sender.socketsRegained(), 2u);
  EXPECT_EQ(receiver.socketsRegained(), 2u);
  const uint64_t onStandby = sender.bytesSentOn(2);
  const uint64_t onStandbyBack = receiver.bytesSentOn(2);
  bothWays(sender, receiver, more, GetParam().inPlace, [](int) {});
  EXPECT_EQ(sender.bytesSentOn(2), onStandby);
  EXPECT_EQ(receiver.bytesSentOn(2), onStandbyBack);
  EXPECT_GT(sender.bytesSentOn(0), 10 * kShape.slotBytes);
  // Lost again.
  bothWays(sender, receiver, more, GetParam().inPlace, [&](int i) {
    if (i == 2) down->store(true);
  });
  EXPECT_EQ(sender.givenUpStripes(), 0b11u);
  EXPECT_EQ(receiver.givenUpStripes(), 0b11u);
  EXPECT_GT(sender.bytesSentOn(2), onStandby);
  EXPECT_TRUE(sender.peerAlive());
  EXPECT_TRUE(receiver.peerAlive());
}

// An encrypted standby over "lan x" beside a pair's cables, at both ends.
void addStandby(Striped& p) {
  std::vector<ProvenSocket> sa, sb;
  provenPairs(1, 0, &sa, &sb);
  p.sender->addStandby(std::move(sa[0]), WireProtect::Encrypt, "lan x");
  p.receiver->addStandby(std::move(sb[0]), WireProtect::Encrypt, "lan x");
}

TEST_P(TcpFailover, OneOfTwoCablesBackTakesEverythingOffTheStandby) {
  // Two cables and a standby. Both cables are lost, so everything goes
  // over the standby; then only cable a comes back. Its own lanes go home,
  // and so must cable b's: a cable carries them faster than the LAN, and
  // b may never come back. The standby then carries nothing more.
  Striped p = stripedPair(GetParam().protect, 4096);
  addStandby(p);
  TcpConnection& sender = *p.sender;
  TcpConnection& receiver = *p.receiver;
  const auto linkADown = std::make_shared<std::atomic<bool>>(false);
  const auto linkBDown = std::make_shared<std::atomic<bool>>(false);
  sender.followLinkStates({linkADown, linkADown, linkBDown, linkBDown});
  const std::vector<std::byte> data = pattern(30 * kShape.slotBytes + 5, 41);
  bothWays(sender, receiver, data, GetParam().inPlace, [&](int i) {
    if (i == 2) linkADown->store(true);
    if (i == 3) linkBDown->store(true);
  });
  ASSERT_EQ(sender.givenUpStripes(), 0b1111u);
  ASSERT_EQ(receiver.givenUpStripes(), 0b1111u);
  // Everything on the standby, both ways.
  bothWays(sender, receiver, data, GetParam().inPlace, [](int) {});
  ASSERT_GT(sender.bytesSentOn(kStripes), data.size());
  ASSERT_GT(receiver.bytesSentOn(kStripes), data.size());
  linkADown->store(false);
  sender.movesBackSecond();
  offerCableBack(sender, receiver, 0);
  bothWays(sender, receiver, data, GetParam().inPlace, [](int) {});
  EXPECT_EQ(sender.givenUpStripes(), 0b1100u);
  EXPECT_EQ(receiver.givenUpStripes(), 0b1100u);
  const uint64_t onStandby = sender.bytesSentOn(kStripes);
  const uint64_t onStandbyBack = receiver.bytesSentOn(kStripes);
  const uint64_t onA0 = sender.bytesSentOn(0);
  const uint64_t onA1 = sender.bytesSentOn(1);
  bothWays(sender, receiver, data, GetParam().inPlace, [](int) {});
  EXPECT_EQ(sender.bytesSentOn(kStripes), onStandby);
  EXPECT_EQ(receiver.bytesSentOn(kStripes), onStandbyBack);
  // Each of a's sockets took one of b's lanes: half of it all, each.
  EXPECT_GT(sender.bytesSentOn(0) - onA0, data.size() / 3);
  EXPECT_GT(sender.bytesSentOn(1) - onA1, data.size() / 3);
  // Then b comes back too: its lanes go home from a.
  linkBDown->store(false);
  offerCableBack(sender, receiver, 2);
  bothWays(sender, receiver, data, GetParam().inPlace, [](int) {});
  EXPECT_EQ(sender.givenUpStripes(), 0u);
  EXPECT_EQ(receiver.givenUpStripes(), 0u);
  const uint64_t onB = sender.bytesSentOn(2) + sender.bytesSentOn(3);
  const uint64_t onBBack = receiver.bytesSentOn(2) + receiver.bytesSentOn(3);
  bothWays(sender, receiver, data, GetParam().inPlace, [](int) {});
  EXPECT_GT(sender.bytesSentOn(2) + sender.bytesSentOn(3) - onB,
            data.size() / 3);
  EXPECT_GT(receiver.bytesSentOn(2) + receiver.bytesSentOn(3) - onBBack,
            data.size() / 3);
  EXPECT_EQ(sender.bytesSentOn(kStripes), onStandby);
  EXPECT_TRUE(sender.peerAlive());
  EXPECT_TRUE(receiver.peerAlive());
}

TEST_P(TcpFailover, BothCablesBackAtOnceEachTakesItsOwnLanesOffTheStandby) {
  // Two cables and a standby; both cables lost, then both back at once
  // (a port's controller reset): every socket is offered before either
  // end looks. Each cable takes its own lanes back; none is left on the
  // standby or on the other cable.
  Striped p = stripedPair(GetParam().protect, 4096);
  addStandby(p);
  TcpConnection& sender = *p.sender;
  TcpConnection& receiver = *p.receiver;
  const auto down = std::make_shared<std::atomic<bool>>(false);
  sender.followLinkStates({down, down, down, down});
  const std::vector<std::byte> data = pattern(30 * kShape.slotBytes + 5, 42);
  bothWays(sender, receiver, data, GetParam().inPlace, [&](int i) {
    if (i == 2) down->store(true);
  });
  ASSERT_EQ(sender.givenUpStripes(), 0b1111u);
  ASSERT_EQ(receiver.givenUpStripes(), 0b1111u);
  down->store(false);
  sender.movesBackSecond();
  offerCableBack(sender, receiver, 0);
  offerCableBack(sender, receiver, 2);
  bothWays(sender, receiver, data, GetParam().inPlace, [](int) {});
  EXPECT_EQ(sender.givenUpStripes(), 0u);
  EXPECT_EQ(receiver.givenUpStripes(), 0u);
  std::vector<uint64_t> before;
  for (size_t i = 0; i <= kStripes; ++i)
    before.push_back(sender.bytesSentOn(i) + receiver.bytesSentOn(i));
  bothWays(sender, receiver, data, GetParam().inPlace, [](int) {});
  // Both ways, a quarter each on every cable's socket; nothing on the
  // standby.
  for (size_t i = 0; i < kStripes; ++i)
    EXPECT_GT(sender.bytesSentOn(i) + receiver.bytesSentOn(i) - before[i],
              data.size() / 3)
        << i;
  EXPECT_EQ(sender.bytesSentOn(kStripes) + receiver.bytesSentOn(kStripes),
            before[kStripes]);
}

// A pair over one cable (receiving ends of 4 KiB) and a standby beside it,
// the cable followed by the sender alone.
struct WithStandby {
  std::unique_ptr<TcpConnection> sender;
  std::unique_ptr<TcpConnection> receiver;
  std::shared_ptr<std::atomic<bool>> down =
      std::make_shared<std::atomic<bool>>(false);
};
WithStandby standbyPair() {
  std::vector<ProvenSocket> a, b, sa, sb;
  provenPairs(2, 4096, &a, &b, 0);
  provenPairs(1, 0, &sa, &sb);
  const std::vector<std::string> links = {"cable a", "cable a"};
  WithStandby p;
  p.sender = std::make_unique<TcpConnection>(
      1, std::move(a), kShape, "test", WireProtect::None,
      PieceCipher::ChaCha20Poly1305, links);
  p.receiver = std::make_unique<TcpConnection>(
      0, std::move(b), kShape, "test", WireProtect::None,
      PieceCipher::ChaCha20Poly1305, links);
  p.sender->addStandby(std::move(sa[0]), WireProtect::Encrypt, "lan x");
  p.receiver->addStandby(std::move(sb[0]), WireProtect::Encrypt, "lan x");
  p.sender->followLinkStates({p.down, p.down});
  return p;
}

TEST(TcpFailover, PiecesOnALostCableGoAgainWhenTheSenderOnlyTendsIt) {
  // The sender's operation is over (its pieces written, waiting
  // unacknowledged on the cable) and it waits on another peer: only tend()
  // looks at this connection. The cable goes down: tend alone must send
  // them again over the standby.
  WithStandby p = standbyPair();
  const std::vector<std::byte> data = pattern(24 * kShape.slotBytes, 31);
  // As much as the slots take while the receiver reads nothing: the
  // operation that sent it is over.
  size_t sent = 0;
  for (int i = 0; i < 2000; ++i) {
    offer(*p.sender, data, true, &sent);
    p.sender->progress();
  }
  ASSERT_TRUE(p.sender->drained());
  ASSERT_GT(sent, 0u);
  p.sender->releaseCallerMemory();
  p.down->store(true);
  std::vector<std::byte> got;
  for (Turns t; t.more() && got.size() < sent; ++t.i) {
    p.sender->tend();
    take(*p.receiver, &got);
  }
  EXPECT_TRUE(got == std::vector<std::byte>(data.begin(),
                                            data.begin() + ptrdiff_t(sent)));
  // tend() gave the cable up and sent its unacknowledged pieces again.
  EXPECT_EQ(p.sender->givenUpStripes(), 0b11u);
  EXPECT_GT(p.sender->bytesMoved(), 0u);
}

TEST(TcpFailover, AnIdleStandbyThatSaysFarewellIsReadNotPolledForEver) {
  // After a loss and the cable's return the standby is idle again; the
  // peer then says farewell on every socket and closes. The waker must
  // not find the standby readable for ever: its farewell is read.
  WithStandby p = standbyPair();
  const std::vector<std::byte> data = pattern(20 * kShape.slotBytes, 32);
  bothWays(*p.sender, *p.receiver, data, true, [&](int i) {
    if (i == 2) p.down->store(true);
  });
  ASSERT_EQ(p.sender->givenUpStripes(), 0b11u);
  p.down->store(false);
  p.sender->movesBackSecond();
  offerCableBack(*p.sender, *p.receiver, 0);
  bothWays(*p.sender, *p.receiver, data, true, [](int) {});
  ASSERT_EQ(p.receiver->socketsRegained(), 2u);
  p.sender->sayFarewell("done here");
  p.sender.reset();
  for (int i = 0; i < 1000; ++i) p.receiver->progress();
  EXPECT_FALSE(p.receiver->wantsRead(2));
}

INSTANTIATE_TEST_SUITE_P(
    Protections, TcpFailover,
    ::testing::Values(Case{WireProtect::None, true, false},
                      Case{WireProtect::None, false, false},
                      Case{WireProtect::None, true, true},
                      Case{WireProtect::Mac, true, false},
                      Case{WireProtect::Encrypt, true, false},
                      Case{WireProtect::Encrypt, false, false}),
    [](const ::testing::TestParamInfo<Case>& c) {
      const char* protect = c.param.protect == WireProtect::None  ? "Clear"
                            : c.param.protect == WireProtect::Mac ? "Mac"
                                                                  : "Encrypt";
      return std::string(protect) +
             (c.param.inPlace ? "FromCallerMemory" : "FromSlots") +
             (c.param.posted ? "ReceivedInPlace" : "");
    });

TEST(TcpFailover, ASecondLinkLostWhileTheFirstsPiecesMoveGoesToTheThird) {
  // Three links of two sockets each; b's and c's receiving ends hold 4 KiB.
  // Link b is lost with pieces waiting on it, some of its lanes move to c,
  // and c is lost a moment later (its moves perhaps not all out, or read
  // past its end): everything ends up on link a, once and in order, under
  // AES-256-GCM where the CPU has it, else ChaCha20-Poly1305.
  const PieceCipher cipher = aesGcmAvailable() ? PieceCipher::Aes256Gcm
                                               : PieceCipher::ChaCha20Poly1305;
  std::vector<ProvenSocket> a, b;
  provenPairs(6, 4096, &a, &b);
  const std::vector<std::string> links = {"cable a", "cable a", "cable b",
                                          "cable b", "cable c", "cable c"};
  TcpConnection sender(1, std::move(a), kShape, "test", WireProtect::Encrypt,
                       cipher, links);
  TcpConnection receiver(0, std::move(b), kShape, "test", WireProtect::Encrypt,
                         cipher, links);
  const auto up = std::make_shared<std::atomic<bool>>(false);
  const auto bDown = std::make_shared<std::atomic<bool>>(false);
  const auto cDown = std::make_shared<std::atomic<bool>>(false);
  sender.followLinkStates({up, up, bDown, bDown, cDown, cDown});
  const std::vector<std::byte> data = pattern(120 * kShape.slotBytes, 13);
  size_t sent = 0;
  for (int i = 0; i < 2000; ++i) {
    offer(sender, data, true, &sent);
    sender.progress();
  }
  bDown->store(true);
  sender.progress();
  std::vector<std::byte> got;
  for (int i = 0; i < 3 && got.size() < data.size(); ++i) {
    take(receiver, &got);
    sender.progress();
  }
  cDown->store(true);
  for (Turns t; t.more() && got.size() < data.size(); ++t.i) {
    offer(sender, data, true, &sent);
    sender.progress();
    take(receiver, &got);
  }
  ASSERT_EQ(got.size(), data.size());
  EXPECT_TRUE(got == data);
  EXPECT_EQ(sender.socketsLost(), 4u);
}

TEST(TcpFailover, ALinkLostWithNoOtherLeftIsKeptAndWaitedOn) {
  // Both links down: nowhere to go. The connection keeps its sockets (a
  // flap may end) and says nothing was moved.
  Striped p = stripedPair(WireProtect::None, 0);
  p.sender->followLinkStates(
      {p.linkBDown, p.linkBDown, p.linkBDown, p.linkBDown});
  p.linkBDown->store(true);
  const std::vector<std::byte> data = pattern(10 * kShape.slotBytes, 1);
  size_t sent = 0;
  std::vector<std::byte> got;
  for (int i = 0; i < 200000 && got.size() < data.size(); ++i) {
    offer(*p.sender, data, true, &sent);
    p.sender->progress();
    take(*p.receiver, &got);
  }
  EXPECT_TRUE(got == data);
  EXPECT_EQ(p.sender->socketsLost(), 0u);
}

}  // namespace
}  // namespace mcl::transport::tcp::failover_test
