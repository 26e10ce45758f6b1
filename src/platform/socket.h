// TCP sockets with deadlines: every blocking step polls with the time left,
// so no socket call can hang past the caller's timeout. POSIX poll() only,
// which macOS and Linux both have.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace mcl::platform {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

// A wait ran past its deadline.
class TimeoutError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The other end closed the connection or reset it.
class ConnectionClosed : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  // Numeric IPv4 or IPv6 address; throws std::invalid_argument otherwise.
  static SocketAddress fromNumeric(const std::string& host, int port);
  // A host name or numeric address (IPv4 preferred); throws
  // std::invalid_argument naming the host when it does not resolve.
  static SocketAddress resolve(const std::string& host, int port);
  std::string host() const;
  int port() const;
  SocketAddress withPort(int port) const;
  bool isLoopback() const;
  // "1.2.3.4:5" or "[::1]:5".
  std::string toString() const;
};

class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept;
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket();

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void close();

 private:
  int fd_ = -1;
};

// Why a bind failed, in words, for err from bind(2) (EADDRINUSE: who may
// hold the port and how to find them); "" when errno says it all.
std::string bindHint(int err, const SocketAddress& address);
// A non-blocking listening socket bound to address (port 0 picks one).
// Throws std::system_error with bindHint's words.
Socket listenTcp(const SocketAddress& address, int backlog);

// The ports mcl's listeners may take (MCL_PORT_RANGE, for firewalls that
// open only some); first == 0: whichever port the OS picks.
struct PortRange {
  int first = 0;
  int last = 0;
  std::string text() const;  // "29500-29599", or "any"
};
// listenTcp on the first free port of range (address's port is ignored),
// or on any port for an empty range. When every port of it is taken:
// std::system_error(EADDRINUSE) naming the range.
Socket listenTcpInRange(const SocketAddress& address, int backlog,
                        const PortRange& range);
// The address a socket is bound to.
SocketAddress localAddress(int fd);
// The address of the other end.
SocketAddress peerAddress(int fd);
// Accepts one pending connection, non-blocking; invalid Socket if none.
Socket acceptConnection(int listenFd);
// Connects with TCP_NODELAY, non-blocking afterwards. Throws
// std::system_error (errno ECONNREFUSED etc.) or TimeoutError.
Socket connectTcp(const SocketAddress& address, Deadline deadline);
// The same, leaving from a given local address (so traffic takes the
// interface, the cable, that address belongs to).
Socket connectTcpFrom(const SocketAddress& local, const SocketAddress& address,
                      Deadline deadline);
// Connects to whichever of addresses answers first (all are tried at
// once); throws the last error when none does before the deadline.
Socket connectAny(const std::vector<SocketAddress>& addresses,
                  Deadline deadline);
// Socket buffer sizes (best effort: the OS caps them).
void setBufferSizes(int fd, int bytes);

void setNonBlocking(int fd);
// A pipe whose ends are non-blocking and not inherited by exec: a thread
// sleeping in poll() is woken by writing a byte to it.
void openWakePipe(int* readEnd, int* writeEnd);
void setNoDelay(int fd);

// Move exactly `bytes`, polling until the deadline.
void sendAll(int fd, const void* data, size_t bytes, Deadline deadline);
void recvAll(int fd, void* data, size_t bytes, Deadline deadline);

// Milliseconds left until deadline for poll(): 0 when passed, capped.
int pollTimeoutMs(Deadline deadline);

}  // namespace mcl::platform
