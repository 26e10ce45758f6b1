#include "common/launcher.h"

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/cpu_binding.h"
#include "common/mcl_error.h"

namespace mcl::perf {

namespace {

using Clock = std::chrono::steady_clock;

// After the first failure the other ranks get this long to end on their
// own (they usually fail fast when a peer is gone), then SIGTERM, then
// SIGKILL.
constexpr auto kGracePeriod = std::chrono::seconds(5);
constexpr auto kKillDelay = std::chrono::seconds(2);
constexpr auto kPollInterval = std::chrono::milliseconds(10);

volatile std::sig_atomic_t gSignal = 0;

void onSignal(int sig) { gSignal = sig; }

void installSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

struct Child {
  pid_t pid = -1;
  bool running = true;
  bool signalled = false;  // stopped by the launcher
};

void signalRunning(std::vector<Child>& children, int sig) {
  for (Child& c : children) {
    if (!c.running) continue;
    kill(c.pid, sig);
    c.signalled = true;
  }
}

int countRunning(const std::vector<Child>& children) {
  int n = 0;
  for (const Child& c : children) n += c.running ? 1 : 0;
  return n;
}

void reportExit(int rank, int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    std::fprintf(stderr, "mcl-perf: rank %d died with signal %d (%s)\n", rank,
                 sig, name ? name : "unknown");
  } else if (WIFEXITED(status)) {
    std::fprintf(stderr, "mcl-perf: rank %d exited with status %d\n", rank,
                 WEXITSTATUS(status));
  }
}

// Waits for every child; returns whether they all exited 0.
bool waitAll(std::vector<Child>& children) {
  bool allOk = true;
  bool forwarded = false;
  std::optional<Clock::time_point> termAt;
  std::optional<Clock::time_point> killAt;
  while (countRunning(children) > 0) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) break;  // no children left
    if (pid > 0) {
      for (size_t rank = 0; rank < children.size(); ++rank) {
        Child& c = children[rank];
        if (c.pid != pid) continue;
        c.running = false;
        if (WIFEXITED(status) && WEXITSTATUS(status) == kExitOk) break;
        allOk = false;
        // A rank that found wrong data said so in the table already.
        const bool wrongData =
            WIFEXITED(status) && WEXITSTATUS(status) == kExitWrongData;
        if (!c.signalled && gSignal == 0 && !wrongData)
          reportExit(static_cast<int>(rank), status);
        if (!termAt) termAt = Clock::now() + kGracePeriod;
        break;
      }
      continue;
    }
    const auto now = Clock::now();
    if (gSignal != 0 && !forwarded) {
      forwarded = true;
      allOk = false;
      signalRunning(children, SIGTERM);
      killAt = now + kKillDelay;
    }
    if (termAt && now >= *termAt && !killAt) {
      const int n = countRunning(children);
      std::fprintf(stderr,
                   "mcl-perf: stopping %d rank%s still running %lld s after "
                   "the first failure\n",
                   n, n == 1 ? "" : "s",
                   static_cast<long long>(kGracePeriod.count()));
      signalRunning(children, SIGTERM);
      killAt = now + kKillDelay;
    }
    if (killAt && now >= *killAt) {
      signalRunning(children, SIGKILL);
      killAt = Clock::time_point::max();
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  return allOk;
}

}  // namespace

int launchLocalRanks(int nranks, bool bindCores,
                     const std::function<int(int, const mclUniqueId&)>& body) {
  // The ranks are forked before the rendezvous thread starts and read the
  // id from a pipe: a fork while another thread is inside the allocator
  // gives the child a lock nobody releases (the sanitizers' allocators take
  // no fork handlers), and the rank hangs.
  int idPipe[2];
  if (pipe(idPipe) != 0) {
    std::fprintf(stderr, "mcl-perf: launcher: pipe failed: %s\n",
                 std::strerror(errno));
    return kExitFailure;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<Child> children;
  for (int rank = 0; rank < nranks; ++rank) {
    const pid_t pid = fork();
    if (pid == 0) {
      close(idPipe[1]);
      if (bindCores) bindToCore(rank);
      mclUniqueId id{};
      // End of file: the launcher failed to make the id and said why.
      if (read(idPipe[0], &id, sizeof(id)) != static_cast<ssize_t>(sizeof(id)))
        exitNow(kExitFailure);
      close(idPipe[0]);
      exitNow(body(rank, id));
    }
    if (pid < 0) {
      std::fprintf(stderr, "mcl-perf: cannot fork rank %d: %s\n", rank,
                   std::strerror(errno));
      signalRunning(children, SIGKILL);
      for (const Child& c : children) waitpid(c.pid, nullptr, 0);
      exitNow(kExitFailure);
    }
    Child c;
    c.pid = pid;
    children.push_back(c);
  }
  close(idPipe[0]);

  mclUniqueId id{};
  const mclResult_t r = mclGetUniqueId(&id);
  if (r != mclSuccess) {
    const char* last = mclGetLastError(nullptr);
    const std::string detail = last ? last : "";
    std::fprintf(stderr, "mcl-perf: launcher: mclGetUniqueId failed: %s (%s)\n",
                 mclGetErrorString(r), detail.c_str());
    close(idPipe[1]);
    for (const Child& c : children) waitpid(c.pid, nullptr, 0);
    return kExitFailure;
  }
  // One id per rank; an id is far smaller than PIPE_BUF, so each write is
  // whole.
  for (int rank = 0; rank < nranks; ++rank)
    if (write(idPipe[1], &id, sizeof(id)) != static_cast<ssize_t>(sizeof(id)))
      std::fprintf(stderr, "mcl-perf: launcher: cannot hand rank %d the id\n",
                   rank);
  close(idPipe[1]);
  installSignalHandlers();

  const bool ok = waitAll(children);
  if (gSignal != 0) {
    std::fprintf(stderr, "mcl-perf: interrupted by signal %d\n",
                 static_cast<int>(gSignal));
    exitNow(128 + gSignal);
  }
  // A failed run may leave the rendezvous thread waiting for ranks that
  // will never come: end without waiting for it.
  if (!ok) exitNow(kExitFailure);
  return kExitOk;
}

}  // namespace mcl::perf
