#include "platform/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "platform/system_error.h"

namespace mcl::platform {

SocketAddress SocketAddress::fromNumeric(const std::string& host, int port) {
  if (port < 0 || port > 65535)
    throw std::invalid_argument("port " + std::to_string(port) +
                                " is out of range");
  SocketAddress a;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&a.storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.storage);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    a.length = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    a.length = sizeof(sockaddr_in6);
  } else {
    throw std::invalid_argument("'" + host +
                                "' is not a numeric IPv4 or IPv6 address");
  }
  return a;
}

SocketAddress SocketAddress::resolve(const std::string& host, int port) {
  try {
    return fromNumeric(host, port);
  } catch (const std::invalid_argument&) {
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &list);
  if (rc != 0 || list == nullptr)
    throw std::invalid_argument("host '" + host +
                                "' does not resolve: " + gai_strerror(rc));
  const addrinfo* pick = list;
  for (const addrinfo* a = list; a != nullptr; a = a->ai_next)
    if (a->ai_family == AF_INET) {
      pick = a;
      break;
    }
  SocketAddress out;
  memcpy(&out.storage, pick->ai_addr, pick->ai_addrlen);
  out.length = static_cast<socklen_t>(pick->ai_addrlen);
  freeaddrinfo(list);
  return fromNumeric(out.host(), port);
}

std::string SocketAddress::host() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (storage.ss_family == AF_INET) {
    inet_ntop(AF_INET,
              &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, buf,
              sizeof(buf));
  } else if (storage.ss_family == AF_INET6) {
    inet_ntop(AF_INET6,
              &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, buf,
              sizeof(buf));
  }
  return buf;
}

int SocketAddress::port() const {
  if (storage.ss_family == AF_INET)
    return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
  if (storage.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  return 0;
}

SocketAddress SocketAddress::withPort(int newPort) const {
  SocketAddress a = *this;
  if (a.storage.ss_family == AF_INET)
    reinterpret_cast<sockaddr_in*>(&a.storage)->sin_port =
        htons(static_cast<uint16_t>(newPort));
  else if (a.storage.ss_family == AF_INET6)
    reinterpret_cast<sockaddr_in6*>(&a.storage)->sin6_port =
        htons(static_cast<uint16_t>(newPort));
  return a;
}

bool SocketAddress::isLoopback() const {
  std::string h = host();
  return h.rfind("127.", 0) == 0 || h == "::1";
}

std::string SocketAddress::toString() const {
  if (storage.ss_family == AF_INET6)
    return "[" + host() + "]:" + std::to_string(port());
  return host() + ":" + std::to_string(port());
}

Socket::Socket(Socket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

Socket::~Socket() { close(); }

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void setNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    throwSystemError("fcntl(O_NONBLOCK)");
}

void openWakePipe(int* readEnd, int* writeEnd) {
  int fds[2];
  if (pipe(fds) != 0) throwSystemError("pipe");
  for (int fd : fds) {
    fcntl(fd, F_SETFL, O_NONBLOCK);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  *readEnd = fds[0];
  *writeEnd = fds[1];
}

void setNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void setCloseOnExec(int fd) { fcntl(fd, F_SETFD, FD_CLOEXEC); }

static void setNoSigPipe(int fd) {
#if defined(SO_NOSIGPIPE)
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one));
#else
  (void)fd;
#endif
}

// Every connection mcl makes: not inherited by exec, non-blocking, no Nagle
// delay, no SIGPIPE.
static void prepareStream(int fd) {
  setCloseOnExec(fd);
  setNonBlocking(fd);
  setNoDelay(fd);
  setNoSigPipe(fd);
}

std::string bindHint(int err, const SocketAddress& address) {
  const std::string port = std::to_string(address.port());
  switch (err) {
    case EADDRINUSE:
      return " (another process listens on port " + port +
             "; find it with: ss -ltnp 'sport = :" + port +
             "' on Linux, lsof -nP -iTCP:" + port + " -sTCP:LISTEN on macOS)";
    case EADDRNOTAVAIL:
      return " (no interface of this host has the address " + address.host() +
             ")";
    case EACCES:
      return " (ports below 1024 need root)";
    default:
      return "";
  }
}

Socket listenTcp(const SocketAddress& address, int backlog) {
  Socket s(socket(address.storage.ss_family, SOCK_STREAM, 0));
  if (!s.valid()) throwSystemError("socket");
  setCloseOnExec(s.fd());
  int one = 1;
  setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(s.fd(), reinterpret_cast<const sockaddr*>(&address.storage),
           address.length) != 0) {
    const int err = errno;
    throwSystemError("bind to " + address.toString() + bindHint(err, address),
                     err);
  }
  if (listen(s.fd(), backlog) != 0)
    throwSystemError("listen on " + address.toString());
  setNonBlocking(s.fd());
  return s;
}

std::string PortRange::text() const {
  return first == 0 ? "any"
                    : std::to_string(first) + "-" + std::to_string(last);
}

Socket listenTcpInRange(const SocketAddress& address, int backlog,
                        const PortRange& range) {
  if (range.first == 0) return listenTcp(address.withPort(0), backlog);
  for (int port = range.first; port <= range.last; ++port) {
    try {
      return listenTcp(address.withPort(port), backlog);
    } catch (const std::system_error& e) {
      if (e.code().value() != EADDRINUSE) throw;
    }
  }
  throwSystemError("listening on " + address.host() + ": every port of " +
                       "MCL_PORT_RANGE=" + range.text() +
                       " is taken (other jobs or leftover processes hold "
                       "them: widen the range, or stop what holds them)",
                   EADDRINUSE);
}

SocketAddress localAddress(int fd) {
  SocketAddress a;
  a.length = sizeof(a.storage);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&a.storage), &a.length) != 0)
    throwSystemError("getsockname");
  return a;
}

SocketAddress peerAddress(int fd) {
  SocketAddress a;
  a.length = sizeof(a.storage);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&a.storage), &a.length) != 0)
    a.length = 0;
  return a;
}

Socket acceptConnection(int listenFd) {
  int fd = accept(listenFd, nullptr, nullptr);
  if (fd < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
        errno == ECONNABORTED)
      return Socket();
    throwSystemError("accept");
  }
  Socket s(fd);
  prepareStream(fd);
  return s;
}

int pollTimeoutMs(Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - Clock::now())
                  .count();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<long long>(left + 1, 1000 * 1000));
}

void setBufferSizes(int fd, int bytes) {
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
}

Socket connectTcp(const SocketAddress& address, Deadline deadline) {
  return connectTcpFrom(SocketAddress{}, address, deadline);
}

Socket connectTcpFrom(const SocketAddress& local, const SocketAddress& address,
                      Deadline deadline) {
  Socket s(socket(address.storage.ss_family, SOCK_STREAM, 0));
  if (!s.valid()) throwSystemError("socket");
  if (local.length > 0) {
    SocketAddress from = local;
    if (from.storage.ss_family == AF_INET)
      reinterpret_cast<sockaddr_in*>(&from.storage)->sin_port = 0;
    else
      reinterpret_cast<sockaddr_in6*>(&from.storage)->sin6_port = 0;
    if (bind(s.fd(), reinterpret_cast<const sockaddr*>(&from.storage),
             from.length) != 0)
      throwSystemError("bind to " + from.host() + " before connecting to " +
                       address.toString());
  }
  prepareStream(s.fd());
  if (connect(s.fd(), reinterpret_cast<const sockaddr*>(&address.storage),
              address.length) == 0)
    return s;
  if (errno != EINPROGRESS && errno != EINTR)
    throwSystemError("connect to " + address.toString());
  while (true) {
    pollfd p{s.fd(), POLLOUT, 0};
    int timeout = pollTimeoutMs(deadline);
    int n = poll(&p, 1, timeout);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throwSystemError("poll while connecting to " + address.toString());
    if (n == 0) {
      if (Clock::now() >= deadline)
        throw TimeoutError("connect to " + address.toString() + " timed out");
      continue;
    }
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) throwSystemError("connect to " + address.toString(), err);
    return s;
  }
}

static Socket connectFirst(const std::vector<SocketAddress>& addresses,
                           Deadline deadline);

Socket connectAny(const std::vector<SocketAddress>& addresses,
                  Deadline deadline) {
  // Loopback answers first on any host, but it reaches the root only when
  // it is on this host: try it last, after every other address failed.
  std::vector<SocketAddress> remote, local;
  for (const auto& a : addresses)
    (a.isLoopback() ? local : remote).push_back(a);
  if (!remote.empty() && !local.empty()) {
    try {
      return connectFirst(remote, deadline);
    } catch (const std::system_error&) {
    } catch (const TimeoutError&) {
    }
    return connectFirst(local, deadline);
  }
  return connectFirst(addresses, deadline);
}

static Socket connectFirst(const std::vector<SocketAddress>& addresses,
                           Deadline deadline) {
  if (addresses.size() == 1) return connectTcp(addresses[0], deadline);
  struct Attempt {
    Socket socket;
    const SocketAddress* address;
  };
  std::vector<Attempt> attempts;
  int lastErr = ECONNREFUSED;
  std::string lastWhat = "no address";
  for (const auto& a : addresses) {
    Socket s(socket(a.storage.ss_family, SOCK_STREAM, 0));
    if (!s.valid()) continue;
    prepareStream(s.fd());
    if (connect(s.fd(), reinterpret_cast<const sockaddr*>(&a.storage),
                a.length) == 0)
      return s;
    if (errno != EINPROGRESS && errno != EINTR) {
      lastErr = errno;
      lastWhat = "connect to " + a.toString();
      continue;
    }
    attempts.push_back({std::move(s), &a});
  }
  while (!attempts.empty()) {
    std::vector<pollfd> fds;
    for (auto& at : attempts) fds.push_back({at.socket.fd(), POLLOUT, 0});
    int n = poll(fds.data(), fds.size(), pollTimeoutMs(deadline));
    if (n < 0 && errno != EINTR) throwSystemError("poll while connecting");
    if (n <= 0) {
      if (Clock::now() >= deadline)
        throw TimeoutError("connect to " + attempts[0].address->toString() +
                           " and " + std::to_string(attempts.size() - 1) +
                           " more addresses timed out");
      continue;
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      int err = 0;
      socklen_t len = sizeof(err);
      getsockopt(fds[i].fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err == 0) return std::move(attempts[i].socket);
      lastErr = err;
      lastWhat = "connect to " + attempts[i].address->toString();
      attempts[i].socket.close();
    }
    std::erase_if(attempts, [](const Attempt& a) { return !a.socket.valid(); });
  }
  throwSystemError(lastWhat, lastErr);
}

static void waitFor(int fd, short events, Deadline deadline, const char* what) {
  while (true) {
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, pollTimeoutMs(deadline));
    if (n > 0) return;
    if (n < 0 && errno != EINTR) throwSystemError(std::string("poll ") + what);
    if (n == 0 && Clock::now() >= deadline)
      throw TimeoutError(std::string(what) + " timed out");
  }
}

#if defined(MSG_NOSIGNAL)
constexpr int kSendFlags = MSG_NOSIGNAL;
#else
constexpr int kSendFlags = 0;  // SO_NOSIGPIPE set on the socket instead
#endif

void sendAll(int fd, const void* data, size_t bytes, Deadline deadline) {
  auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = send(fd, p, bytes, kSendFlags);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      waitFor(fd, POLLOUT, deadline, "send");
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
      throw ConnectionClosed("connection closed by the other end");
    throwSystemError("send");
  }
}

void recvAll(int fd, void* data, size_t bytes, Deadline deadline) {
  auto* p = static_cast<char*>(data);
  while (bytes > 0) {
    ssize_t n = recv(fd, p, bytes, 0);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) throw ConnectionClosed("connection closed by the other end");
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      waitFor(fd, POLLIN, deadline, "receive");
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == ECONNRESET)
      throw ConnectionClosed("connection reset by the other end");
    throwSystemError("recv");
  }
}

}  // namespace mcl::platform
