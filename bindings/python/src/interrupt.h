// Ctrl-C during a call that blocks in mcl. Python only notices SIGINT
// between bytecodes, so a rank waiting on a peer that never comes would sit
// out the whole timeout. While a guard is alive, SIGINT (when Python would
// turn it into KeyboardInterrupt) also runs the guard's action, from a
// watcher thread: the communicator is aborted, the call returns, and
// Python raises KeyboardInterrupt as usual.
#pragma once

#include <functional>

namespace mcl::python {

class InterruptGuard {
 public:
  // Call with the GIL held. Does nothing off the main thread (Python
  // raises KeyboardInterrupt there only). The action runs only when
  // SIGINT's Python handler is the default one: a program that handles
  // Ctrl-C itself keeps its communicators.
  explicit InterruptGuard(std::function<void()> onInterrupt);
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  std::function<void()> action_;
  bool armed_ = false;
};

}  // namespace mcl::python
