#include "stranger_flood.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace mcl::test {

namespace {

using Clock = std::chrono::steady_clock;

// A slot opens a new connection this soon after mcl dropped its last one
// or refused it (nobody listening there yet): fast enough to take every
// place mcl frees and to be there the moment a listener opens.
constexpr auto kReopenAfter = std::chrono::milliseconds(2);

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
  size_t turn = 0;
  char sink[4096];
  while (true) {
    // New targets, when the test sent some (blocking until the first).
    pollfd aimed{targetPipe, POLLIN, 0};
    if (poll(&aimed, 1, targets.empty() ? -1 : 0) > 0) {
      uint32_t count = 0;
      if (read(targetPipe, &count, sizeof(count)) != sizeof(count)) _exit(0);
      targets.resize(count);
      const ssize_t bytes = static_cast<ssize_t>(count * sizeof(sockaddr_in));
      if (count > 0 && read(targetPipe, targets.data(), size_t(bytes)) != bytes)
        _exit(0);
    }
    const auto now = Clock::now();
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
    poll(fds.data(), fds.size(), 2);
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

std::vector<sockaddr_in> localTargets(int first, int last) {
  std::vector<in_addr> hosts;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* i = list; i != nullptr; i = i->ifa_next)
      if (i->ifa_addr != nullptr && i->ifa_addr->sa_family == AF_INET)
        hosts.push_back(reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr);
    freeifaddrs(list);
  }
  std::vector<sockaddr_in> targets;
  for (int port = first; port <= last; ++port)
    for (const in_addr& host : hosts) {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<uint16_t>(port));
      a.sin_addr = host;
      targets.push_back(a);
    }
  return targets;
}

}  // namespace mcl::test
