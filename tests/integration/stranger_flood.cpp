#include "stranger_flood.h"

#if defined(__linux__)  // the flood tests are Linux's (socket diagnostics)

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

namespace mcl::test {

namespace {

using Clock = std::chrono::steady_clock;

// A slot opens a new connection this soon after mcl dropped its last one
// or refused it (nobody listening there yet): fast enough to take every
// place mcl frees and to be there the moment a listener opens.
constexpr auto kReopenAfter = std::chrono::milliseconds(2);

// How often a flood aimed at listeners looks for them again.
constexpr auto kRescanEvery = std::chrono::milliseconds(1);

// The pipe's word before a port range (aimAtListeners) instead of a count
// of targets (aim).
constexpr uint32_t kListenersInRange = UINT32_MAX;

int openTo(const sockaddr_in& target) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  fcntl(fd, F_SETFL, O_NONBLOCK);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&target), sizeof(target)) !=
          0 &&
      errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

StrangerFlood::StrangerFlood(size_t strangers) {
  void* shared = mmap(nullptr, sizeof(Counters), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) return;
  counters_ = new (shared) Counters;
  int fds[2];
  if (pipe(fds) != 0) return;
  pid_ = fork();
  if (pid_ == 0) {
    close(fds[1]);
    run(fds[0], strangers);
  }
  close(fds[0]);
  targetPipe_ = fds[1];
}

StrangerFlood::~StrangerFlood() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (targetPipe_ >= 0) close(targetPipe_);
  if (counters_ != nullptr) munmap(counters_, sizeof(Counters));
}

void StrangerFlood::aim(const std::vector<sockaddr_in>& targets) {
  const uint32_t count = static_cast<uint32_t>(targets.size());
  if (write(targetPipe_, &count, sizeof(count)) != sizeof(count)) return;
  const ssize_t bytes = static_cast<ssize_t>(count * sizeof(sockaddr_in));
  if (count > 0 && write(targetPipe_, targets.data(), size_t(bytes)) != bytes)
    return;
}

void StrangerFlood::aimAtListeners(int first, int last) {
  const uint32_t message[3] = {kListenersInRange, uint32_t(first),
                               uint32_t(last)};
  if (write(targetPipe_, message, sizeof(message)) != sizeof(message)) return;
}

size_t StrangerFlood::opened() const {
  return counters_ != nullptr ? counters_->opened.load() : 0;
}

size_t StrangerFlood::answered() const {
  return counters_ != nullptr ? counters_->answered.load() : 0;
}

void StrangerFlood::run(int targetPipe, size_t strangers) {
  struct Slot {
    int fd = -1;
    Clock::time_point next;
  };
  std::vector<Slot> slots(strangers);
  std::vector<sockaddr_in> targets;
  bool scanning = false;  // aimAtListeners: targets are looked up
  int scanFirst = 0, scanLast = 0;
  Clock::time_point nextScan;
  size_t turn = 0;
  char sink[4096];
  while (true) {
    // New targets, when the test sent some (blocking until the first).
    pollfd aimed{targetPipe, POLLIN, 0};
    if (poll(&aimed, 1, targets.empty() && !scanning ? -1 : 0) > 0) {
      uint32_t count = 0;
      if (read(targetPipe, &count, sizeof(count)) != sizeof(count)) _exit(0);
      scanning = count == kListenersInRange;
      if (scanning) {
        uint32_t range[2];
        if (read(targetPipe, range, sizeof(range)) != sizeof(range)) _exit(0);
        scanFirst = int(range[0]);
        scanLast = int(range[1]);
        count = 0;
      }
      targets.resize(count);
      const ssize_t bytes = static_cast<ssize_t>(count * sizeof(sockaddr_in));
      if (count > 0 && read(targetPipe, targets.data(), size_t(bytes)) != bytes)
        _exit(0);
    }
    const auto now = Clock::now();
    if (scanning && now >= nextScan) {
      targets = listenersInRange(scanFirst, scanLast);
      nextScan = now + kRescanEvery;
    }
    for (Slot& s : slots) {
      if (s.fd >= 0 || now < s.next || targets.empty()) continue;
      s.fd = openTo(targets[turn++ % targets.size()]);
      if (s.fd >= 0)
        ++counters_->opened;
      else
        s.next = now + kReopenAfter;
    }
    std::vector<pollfd> fds;
    std::vector<Slot*> owners;
    for (Slot& s : slots)
      if (s.fd >= 0) {
        fds.push_back({s.fd, POLLIN, 0});
        owners.push_back(&s);
      }
    poll(fds.data(), fds.size(), scanning ? 1 : 2);
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      // A challenge to ignore, or the end: refused, dropped or closed.
      const ssize_t n = recv(fds[i].fd, sink, sizeof(sink), MSG_DONTWAIT);
      if (n > 0) ++counters_->answered;
      if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR))) continue;
      close(fds[i].fd);
      owners[i]->fd = -1;
      owners[i]->next = Clock::now() + kReopenAfter;
    }
  }
}

std::vector<sockaddr_in> listenersInRange(int first, int last) {
  // Asked of the kernel's socket diagnostics, which keep to listening
  // sockets: /proc/net/tcp would list every connection of the flood, and
  // the thousands it left waiting to close, and take milliseconds to read.
  std::vector<sockaddr_in> found;
  const int fd =
      socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return found;
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } ask{};
  ask.header.nlmsg_len = sizeof(ask);
  ask.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  ask.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  ask.request.sdiag_family = AF_INET;
  ask.request.sdiag_protocol = IPPROTO_TCP;
  ask.request.idiag_states = 1U << 10;  // TCP_LISTEN
  if (send(fd, &ask, sizeof(ask), 0) != static_cast<ssize_t>(sizeof(ask))) {
    close(fd);
    return found;
  }
  // Read field by field (memcpy): the kernel's NLMSG_* macros cast and
  // compare in ways clang's warnings refuse.
  auto aligned = [](size_t bytes) { return (bytes + 3) & ~size_t{3}; };
  const size_t headerBytes = aligned(sizeof(nlmsghdr));
  char reply[16384];
  bool done = false;
  while (!done) {
    const ssize_t n = recv(fd, reply, sizeof(reply), 0);
    if (n <= 0) break;
    const auto got = static_cast<size_t>(n);
    for (size_t at = 0; at + sizeof(nlmsghdr) <= got;) {
      nlmsghdr h;
      memcpy(&h, reply + at, sizeof(h));
      if (h.nlmsg_len < sizeof(nlmsghdr) || at + h.nlmsg_len > got) break;
      if (h.nlmsg_type == NLMSG_DONE || h.nlmsg_type == NLMSG_ERROR) {
        done = true;
        break;
      }
      inet_diag_msg entry{};
      if (h.nlmsg_len >= headerBytes + sizeof(entry)) {
        memcpy(&entry, reply + at + headerBytes, sizeof(entry));
        const int port = ntohs(entry.id.idiag_sport);
        if (port >= first && port <= last) {
          sockaddr_in a{};
          a.sin_family = AF_INET;
          a.sin_port = entry.id.idiag_sport;
          a.sin_addr.s_addr = entry.id.idiag_src[0];
          if (a.sin_addr.s_addr == htonl(INADDR_ANY))
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
          found.push_back(a);
        }
      }
      at += aligned(h.nlmsg_len);
    }
  }
  close(fd);
  return found;
}

}  // namespace mcl::test
#endif
