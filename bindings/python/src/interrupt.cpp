#include "interrupt.h"

#include <pybind11/pybind11.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <thread>

namespace py = pybind11;

namespace mcl::python {
namespace {

std::atomic<bool> armed{false};
std::atomic<int> pipeWrite{-1};
struct sigaction previousAction;

// Only the main thread arms a guard, one call at a time: one slot. The
// watcher runs the action under this mutex, so a guard's destructor waits
// for an abort in progress.
std::mutex slotMutex;
std::function<void()>* armedAction = nullptr;
pid_t watcherPid = 0;  // the process whose watcher runs (fork resets it)

void onSigint(int sig, siginfo_t* info, void* context) {
  const int savedErrno = errno;
  const int fd = pipeWrite.load();
  if (armed.load() && fd >= 0) {
    const char byte = 1;
    [[maybe_unused]] ssize_t n = write(fd, &byte, 1);
  }
  // Then whatever handled SIGINT before: Python's own handler, which
  // schedules KeyboardInterrupt.
  if (previousAction.sa_flags & SA_SIGINFO) {
    if (previousAction.sa_sigaction != nullptr)
      previousAction.sa_sigaction(sig, info, context);
  } else if (previousAction.sa_handler == SIG_DFL) {
    signal(SIGINT, SIG_DFL);
    raise(SIGINT);
  } else if (previousAction.sa_handler != SIG_IGN) {
    previousAction.sa_handler(sig);
  }
  errno = savedErrno;
}

// Whether Python turns SIGINT into KeyboardInterrupt: a program with a
// handler of its own keeps its communicators. Asked when the signal comes
// (the main thread is inside mcl then, without the GIL), not before every
// call: signal.getsignal costs microseconds.
bool pythonRaisesKeyboardInterrupt() {
  PyGILState_STATE gil = PyGILState_Ensure();
  bool raises = false;
  PyObject* signalModule = PyImport_ImportModule("signal");
  if (signalModule != nullptr) {
    PyObject* handler =
        PyObject_CallMethod(signalModule, "getsignal", "i", SIGINT);
    PyObject* standard =
        PyObject_GetAttrString(signalModule, "default_int_handler");
    raises = handler != nullptr && handler == standard;
    Py_XDECREF(handler);
    Py_XDECREF(standard);
    Py_DECREF(signalModule);
  }
  PyErr_Clear();
  PyGILState_Release(gil);
  return raises;
}

void runWatcher(int readFd) {
  for (;;) {
    char byte;
    const ssize_t n = read(readFd, &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    if (!armed.load() || !pythonRaisesKeyboardInterrupt()) continue;
    std::lock_guard<std::mutex> lock(slotMutex);
    if (armedAction != nullptr) (*armedAction)();
  }
}

// Caller holds slotMutex.
void startWatcherIfNeeded() {
  if (watcherPid == getpid()) return;
  // First use, or a forked child: the parent's thread did not come along.
  int fds[2];
  if (pipe(fds) != 0) return;  // Ctrl-C then waits for the call, as before
  const int old = pipeWrite.exchange(fds[1]);
  if (old >= 0) close(old);
  std::thread(runWatcher, fds[0]).detach();
  watcherPid = getpid();
}

// Ours stays in front of Python's, even after signal.signal replaced it.
void installHandlerIfNeeded() {
  struct sigaction current;
  if (sigaction(SIGINT, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == onSigint)
    return;
  previousAction = current;
  struct sigaction mine = {};
  mine.sa_sigaction = onSigint;
  mine.sa_flags = SA_SIGINFO | SA_RESTART | (current.sa_flags & SA_ONSTACK);
  sigemptyset(&mine.sa_mask);
  sigaction(SIGINT, &mine, nullptr);
}

bool onMainThread() {
  static const unsigned long mainThread = py::module_::import("threading")
                                              .attr("main_thread")()
                                              .attr("ident")
                                              .cast<unsigned long>();
  return PyThread_get_thread_ident() == mainThread;
}

}  // namespace

InterruptGuard::InterruptGuard(std::function<void()> onInterrupt)
    : action_(std::move(onInterrupt)) {
  if (!onMainThread()) return;
  std::lock_guard<std::mutex> lock(slotMutex);
  if (armedAction != nullptr) return;  // a nested call: the outer one acts
  startWatcherIfNeeded();
  installHandlerIfNeeded();
  armedAction = &action_;
  armed.store(true);
  armed_ = true;
}

InterruptGuard::~InterruptGuard() {
  if (!armed_) return;
  std::lock_guard<std::mutex> lock(slotMutex);
  armed.store(false);
  armedAction = nullptr;
}

}  // namespace mcl::python
