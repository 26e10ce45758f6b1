#include "interrupt.h"

#include <fcntl.h>
#include <pybind11/pybind11.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace py = pybind11;

namespace mcl::python {
namespace {

// Nonzero while a guard is armed: a number of its own (wrapping in a byte),
// so a signal that lands late cannot abort the next guarded call.
std::atomic<unsigned char> armedGeneration{0};
std::atomic<int> pipeWrite{-1};
struct sigaction previousAction;
// Python's own handler, as found when ours first went in: ours goes back in
// front of it when signal.signal reinstalls it, never in front of another
// library's (which may chain back to ours).
struct sigaction pythonAction;
bool installedOnce = false;

// Only the main thread arms a guard, one call at a time: one slot. The
// watcher runs the action under this mutex, so a guard's destructor waits
// for an abort in progress.
std::mutex slotMutex;
std::function<void()>* armedAction = nullptr;
unsigned char lastGeneration = 0;
pid_t watcherPid = 0;  // the process whose watcher runs (fork resets it)
int pipeRead = -1;

void onSigint(int sig, siginfo_t* info, void* context) {
  const int savedErrno = errno;
  const int fd = pipeWrite.load();
  const unsigned char generation = armedGeneration.load();
  if (generation != 0 && fd >= 0) {
    // Non-blocking: a full pipe already holds a wake-up.
    [[maybe_unused]] ssize_t n = write(fd, &generation, 1);
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

bool sameHandler(const struct sigaction& a, const struct sigaction& b) {
  if ((a.sa_flags & SA_SIGINFO) != (b.sa_flags & SA_SIGINFO)) return false;
  return (a.sa_flags & SA_SIGINFO) ? a.sa_sigaction == b.sa_sigaction
                                   : a.sa_handler == b.sa_handler;
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
    unsigned char generation;
    const ssize_t n = read(readFd, &generation, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    if (armedGeneration.load() != generation ||
        !pythonRaisesKeyboardInterrupt())
      continue;
    std::lock_guard<std::mutex> lock(slotMutex);
    if (armedAction != nullptr && armedGeneration.load() == generation)
      (*armedAction)();
  }
}

// Caller holds slotMutex.
void startWatcherIfNeeded() {
  if (watcherPid == getpid()) return;
  // First use, or a forked child: the parent's thread did not come along,
  // and its pipe is the parent's business.
  if (pipeRead >= 0) close(pipeRead);
  const int oldWrite = pipeWrite.exchange(-1);
  if (oldWrite >= 0) close(oldWrite);
  int fds[2];
  if (pipe(fds) != 0) return;  // Ctrl-C then waits for the call, as before
  for (int fd : fds) fcntl(fd, F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
  pipeRead = fds[0];
  pipeWrite.store(fds[1]);
  std::thread(runWatcher, fds[0]).detach();
  watcherPid = getpid();
}

// Ours goes in front of Python's handler, keeping its flags (it relies on
// interrupted system calls returning EINTR: no SA_RESTART).
void installHandlerIfNeeded() {
  struct sigaction current;
  if (sigaction(SIGINT, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == onSigint)
    return;
  if (installedOnce && !sameHandler(current, pythonAction)) return;
  if (!installedOnce) pythonAction = current;
  installedOnce = true;
  previousAction = current;
  struct sigaction mine = current;
  mine.sa_sigaction = onSigint;
  mine.sa_flags = (current.sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
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
  lastGeneration = lastGeneration == 255 ? 1 : lastGeneration + 1;
  armedGeneration.store(lastGeneration);
  armed_ = true;
}

InterruptGuard::~InterruptGuard() {
  if (!armed_) return;
  std::lock_guard<std::mutex> lock(slotMutex);
  armedGeneration.store(0);
  armedAction = nullptr;
}

}  // namespace mcl::python
