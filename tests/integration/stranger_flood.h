// Strangers at mcl's listening ports, for the security tests: a process
// that keeps a number of connections open to the addresses it is aimed
// at, saying nothing, and opens a new one whenever one is dropped (the
// worst kind: every drop is answered by a new connection). A process, not
// a thread: the ranks are forked, and a busy thread would make each fork
// wait (multiprocess.cpp) or inherit its state.
#pragma once

#if defined(__linux__)  // Linux's socket diagnostics find the listeners

#include <netinet/in.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <vector>

namespace mcl::test {

class StrangerFlood {
 public:
  // Forks the flood; it waits for targets.
  explicit StrangerFlood(size_t strangers);
  ~StrangerFlood();  // kills it: every connection closes
  StrangerFlood(const StrangerFlood&) = delete;
  StrangerFlood& operator=(const StrangerFlood&) = delete;

  // Where to connect, taken in turn (replaces earlier targets).
  void aim(const std::vector<sockaddr_in>& targets);
  // At whatever TCP socket of this network namespace listens on a port of
  // [first, last], looked up again every millisecond (replaces earlier
  // targets): every stranger lands on a listener the moment it opens,
  // not on the ports of the range nobody listens on.
  void aimAtListeners(int first, int last);

  // Connections opened so far (each re-opening counts).
  size_t opened() const;
  // Times a listener spoke to a stranger (challenged it): the strangers
  // did reach mcl, not only closed ports.
  size_t answered() const;
  // The flood's process.
  pid_t pid() const { return pid_; }

 private:
  struct Counters {
    std::atomic<size_t> opened{0};
    std::atomic<size_t> answered{0};
  };
  [[noreturn]] void run(int targetPipe, size_t strangers);

  Counters* counters_ = nullptr;  // shared with the flood's process
  int targetPipe_ = -1;
  pid_t pid_ = -1;
};

// The IPv4 sockets of this network namespace listening on a port of
// [first, last] (Linux's socket diagnostics; one on 0.0.0.0 as 127.0.0.1).
std::vector<sockaddr_in> listenersInRange(int first, int last);

}  // namespace mcl::test
#endif
