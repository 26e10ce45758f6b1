// Strangers at the TCP transport's listener: idle, garbage, a wrong secret,
// the right secret for another communicator. None is ever handed out as a
// stream, none delays the rank that proves the secret, and each is closed.
// Also: the device listens on each interface's own address, never the
// wildcard, and stops listening when told (init done).
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "../integration/listening_sockets.h"
#include "base/error.h"
#include "platform/interfaces.h"
#include "transports/tcp/tcp_handshake.h"
#include "transports/tcp/tcp_listener.h"
#include "transports/tcp/tcp_sockets.h"

namespace mcl::transport::tcp {
namespace {

using platform::Clock;
using namespace std::chrono_literals;

constexpr uint64_t kComm = 0x1234;

struct ListenerUnderTest {
  Secret secret = randomSecret();
  platform::SocketAddress address;
  std::unique_ptr<TcpListener> listener;

  ListenerUnderTest() {
    std::vector<platform::Socket> sockets;
    sockets.push_back(platform::listenTcp(
        platform::SocketAddress::fromNumeric("127.0.0.1", 0), 16));
    address = platform::localAddress(sockets.back().fd());
    listener = std::make_unique<TcpListener>(std::move(sockets), secret, kComm,
                                             /*rank=*/0);
  }
  platform::Socket connect() {
    return platform::connectTcp(address, Clock::now() + 2s);
  }
};

// Whether the listener closed our end within `limit` (a read sees EOF or
// an error, after whatever it sent).
bool closedByPeer(int fd, std::chrono::milliseconds limit) {
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) return true;
  }
  return false;
}

TEST(TcpListener, StrangersNeverBecomeStreamsNorDelayTheRightRank) {
  ListenerUnderTest l;
  const StreamKey key{1, 0, 0, 0};
  // Idle: connects and says nothing.
  platform::Socket idle = l.connect();
  // Garbage where the handshake goes.
  platform::Socket garbage = l.connect();
  std::vector<uint8_t> junk(4096, 0xEE);
  ASSERT_GT(write(garbage.fd(), junk.data(), junk.size()), 0);
  // A wrong secret, claiming the stream the right rank will claim.
  Secret wrong = l.secret;
  wrong[0] ^= 1;
  std::thread wrongSecret([&] {
    platform::Socket s = l.connect();
    EXPECT_ANY_THROW(
        clientHandshake(s.fd(), wrong, kComm, key, Clock::now() + 2s));
  });
  // The right secret for another communicator, claiming the same stream.
  std::thread otherComm([&] {
    platform::Socket s = l.connect();
    try {
      clientHandshake(s.fd(), l.secret, kComm + 1, key, Clock::now() + 2s);
    } catch (const std::exception&) {
    }
    EXPECT_TRUE(closedByPeer(s.fd(), 2000ms));
  });
  wrongSecret.join();
  otherComm.join();
  EXPECT_TRUE(closedByPeer(garbage.fd(), 2000ms));
  // Nobody proved the secret for this communicator: nothing to take.
  EXPECT_THROW(l.listener->take(key, Clock::now() + 200ms), Error);

  // The right rank, with the idle stranger still connected.
  const auto start = Clock::now();
  std::thread right([&] {
    platform::Socket s = l.connect();
    clientHandshake(s.fd(), l.secret, kComm, key, Clock::now() + 2s);
    const char hello = 'h';
    EXPECT_EQ(write(s.fd(), &hello, 1), 1);
    usleep(200 * 1000);  // the test reads before this end closes
  });
  platform::Socket taken = l.listener->take(key, Clock::now() + 3s).socket;
  EXPECT_LT(Clock::now() - start, 1s);
  char got = 0;
  pollfd p{taken.fd(), POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 2000), 1);
  EXPECT_EQ(read(taken.fd(), &got, 1), 1);
  EXPECT_EQ(got, 'h');
  right.join();
}

#if defined(__linux__)
TEST(TcpSockets, ListensOnEachInterfaceAddressNeverTheWildcardUntilInitEnds) {
  TcpOptions options;
  TcpSockets device(0, randomSecret(), kComm, options);
  auto listening = test::listeningSockets();
  ASSERT_FALSE(listening.empty());
  std::set<std::string> interfaceHosts;
  for (const auto& nic : platform::listInterfaces())
    interfaceHosts.insert(nic.address.host());
  for (const auto& s : listening) {
    EXPECT_FALSE(s.wildcard()) << s.text();
    EXPECT_EQ(interfaceHosts.count(s.host), 1u) << s.text();
  }
  device.stopListening();
  EXPECT_TRUE(test::listeningSockets().empty());
}

TEST(TcpSockets, ListensOnlyWhereMclSocketIfnameAllows) {
  TcpOptions options;
  options.ifname = "=lo";
  TcpSockets device(0, randomSecret(), kComm, options);
  auto listening = test::listeningSockets();
  ASSERT_FALSE(listening.empty());
  for (const auto& s : listening)
    EXPECT_TRUE(s.host == "127.0.0.1" || s.host == "::1") << s.text();
}
#endif

}  // namespace
}  // namespace mcl::transport::tcp
