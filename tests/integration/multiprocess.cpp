#include "multiprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "process_census.h"

// GCC says __SANITIZE_ADDRESS__, clang __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define MCL_TEST_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define MCL_TEST_LSAN 1
#endif
#endif
#if defined(MCL_TEST_LSAN)
#include <sanitizer/lsan_interface.h>
#endif

namespace mcl::test {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxFailuresKept = 20;

void writeAll(int fd, const std::string& text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

struct Child {
  int rank = 0;
  pid_t pid = -1;
  int pipe = -1;
  std::string output;
  bool exited = false;
  int status = 0;
};

}  // namespace

void RankContext::fail(const char* fmt, ...) {
  if (++failureCount_ > kMaxFailuresKept) return;
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  failures_ += "rank " + std::to_string(rank_) + ": " + buf + "\n";
  if (failureCount_ == kMaxFailuresKept)
    failures_ += "rank " + std::to_string(rank_) + ": (more failures cut)\n";
}

bool RankContext::ok(mclResult_t result, const char* what) {
  if (result == mclSuccess) return true;
  fail("%s: %s: %s", what, mclGetErrorString(result), mclGetLastError(nullptr));
  return false;
}

bool underSanitizers() {
#if defined(MCL_TEST_LSAN)
  return true;
#else
  return false;
#endif
}

mclComm_t initComm(RankContext& ctx, int timeoutSeconds) {
  mclConfig_t config = MCL_CONFIG_INITIALIZER;
  config.timeoutSeconds = timeoutSeconds;
  mclComm_t comm = nullptr;
  if (!ctx.ok(mclCommInitRankConfig(&comm, ctx.nranks(), ctx.id(), ctx.rank(),
                                    &config),
              "mclCommInitRankConfig"))
    return nullptr;
  return comm;
}

namespace {

#if defined(__linux__)
// The other threads of this process (a rendezvous root that mclGetUniqueId
// started, mostly), by their /proc/self/task names.
std::vector<std::string> otherThreads() {
  const std::string self = std::to_string(gettid());
  std::vector<std::string> tids;
  for (const auto& name : listDir("/proc/self/task", ""))
    if (name[0] != '.' && name != self) tids.push_back(name);
  return tids;
}

// Waits, at most 1 s, until every other thread sleeps in a system call (a
// rendezvous root mostly waits in poll). A fork while another thread is
// inside the allocator gives the child a lock nobody releases: glibc's
// malloc takes it across fork, the sanitizers' allocators (clang 14, GCC
// 12) do not, and the rank hangs in its first allocation.
void waitForOtherThreadsToSleep() {
  const auto deadline = Clock::now() + std::chrono::seconds(1);
  while (Clock::now() < deadline) {
    bool asleep = true;
    for (const auto& tid : otherThreads()) {
      std::ifstream stat("/proc/self/task/" + tid + "/stat");
      std::string line;
      std::getline(stat, line);
      const size_t end = line.rfind(')');  // the state follows the name
      if (end != std::string::npos && end + 2 < line.size() &&
          line[end + 2] == 'R')
        asleep = false;
    }
    if (asleep) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}
#endif

// The body of a forked rank; never returns. The id comes from `id`, or,
// when that is null, from idPipe (runRanks writes it after the fork).
[[noreturn]] void runChild(int rank, int nranks, const mclUniqueId* id,
                           int idPipe, bool checkLeaks, const RankBody& body,
                           int out) {
  mclUniqueId received;
  if (id == nullptr) {
    if (read(idPipe, &received, sizeof(received)) !=
        static_cast<ssize_t>(sizeof(received)))
      _exit(1);  // the parent failed to make the id and says so
    id = &received;
  }
  RankContext ctx(rank, nranks, *id);
  try {
    body(ctx);
  } catch (const std::exception& e) {
    ctx.fail("exception: %s", e.what());
  }
#if defined(MCL_TEST_LSAN)
  // A rank leaves by _exit, which skips LeakSanitizer's check at exit:
  // check here, so that what a rank leaks fails the test.
  if (checkLeaks && __lsan_do_recoverable_leak_check() != 0)
    ctx.fail("LeakSanitizer found leaks (see its report)");
#else
  (void)checkLeaks;
#endif
  writeAll(out, ctx.failures());
  close(out);
  _exit(ctx.failed() ? 1 : 0);
}

// Forks the ranks and collects their reports. id null: runRanks makes the
// id after forking and hands it down a pipe.
::testing::AssertionResult forkRanks(int nranks, const mclUniqueId* id,
                                     const RankBody& body,
                                     std::chrono::seconds bound) {
  fflush(stdout);
  fflush(stderr);
#if defined(__linux__)
  // A process forked while other threads run inherits memory that only
  // their stacks point to; LeakSanitizer in the rank, which cannot see
  // those stacks, would take it for leaks. Such ranks skip the check.
  const bool checkLeaks = otherThreads().empty();
#else
  const bool checkLeaks = false;
#endif
  int idPipe[2] = {-1, -1};
  if (id == nullptr && pipe(idPipe) != 0)
    return ::testing::AssertionFailure() << "pipe failed";
  std::vector<Child> children(static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    int fds[2];
    if (pipe(fds) != 0) return ::testing::AssertionFailure() << "pipe failed";
#if defined(__linux__)
    if (!checkLeaks) waitForOtherThreadsToSleep();
#endif
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      if (idPipe[1] >= 0) close(idPipe[1]);
      runChild(r, nranks, id, idPipe[0], checkLeaks, body, fds[1]);
    }
    close(fds[1]);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    children[static_cast<size_t>(r)] = Child{r, pid, fds[0], "", false, 0};
  }
  if (id == nullptr) {
    // Each rank reads one id; an id is far smaller than PIPE_BUF, so each
    // write arrives whole. On failure the ranks read end-of-file and exit.
    close(idPipe[0]);
    mclUniqueId made;
    const bool madeOk = mclGetUniqueId(&made) == mclSuccess;
    const std::string why = madeOk ? "" : mclGetLastError(nullptr);
    for (int r = 0; r < nranks && madeOk; ++r)
      writeAll(idPipe[1], std::string(made.internal, sizeof(made.internal)));
    close(idPipe[1]);
    if (!madeOk) {
      for (auto& c : children) {
        waitpid(c.pid, &c.status, 0);
        close(c.pipe);
      }
      return ::testing::AssertionFailure() << "mclGetUniqueId: " << why;
    }
  }

  auto deadline = Clock::now() + bound;
  size_t running = children.size();
  while (running > 0 && Clock::now() < deadline) {
    std::vector<pollfd> fds;
    for (auto& c : children)
      if (c.pipe >= 0) fds.push_back({c.pipe, POLLIN, 0});
    if (!fds.empty())
      poll(fds.data(), fds.size(), 50);
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    for (auto& c : children) {
      if (c.pipe >= 0) {
        char buf[4096];
        ssize_t n;
        while ((n = read(c.pipe, buf, sizeof(buf))) > 0)
          c.output.append(buf, static_cast<size_t>(n));
        if (n == 0) {
          close(c.pipe);
          c.pipe = -1;
        }
      }
      if (!c.exited && waitpid(c.pid, &c.status, WNOHANG) == c.pid) {
        c.exited = true;
        --running;
      }
    }
  }

  std::string report;
  for (auto& c : children) {
    if (!c.exited) {
      kill(c.pid, SIGKILL);
      waitpid(c.pid, &c.status, 0);
      report += "rank " + std::to_string(c.rank) + " hung: killed after " +
                std::to_string(bound.count()) + " s\n";
    } else if (WIFSIGNALED(c.status)) {
      report += "rank " + std::to_string(c.rank) + " died with signal " +
                std::to_string(WTERMSIG(c.status)) + " (" +
                strsignal(WTERMSIG(c.status)) + ")\n";
    } else if (WEXITSTATUS(c.status) != 0 && c.output.empty()) {
      report += "rank " + std::to_string(c.rank) + " exited with status " +
                std::to_string(WEXITSTATUS(c.status)) + "\n";
    }
    if (c.pipe >= 0) close(c.pipe);
    report += c.output;
  }
  if (report.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\n" << report;
}

}  // namespace

::testing::AssertionResult runRanks(int nranks, const RankBody& body,
                                    std::chrono::seconds bound) {
  // The ranks are forked before the id exists: mclGetUniqueId starts the
  // rendezvous root's thread here (see forkRanks).
  return forkRanks(nranks, nullptr, body, bound);
}

::testing::AssertionResult runRanksWithId(int nranks, const mclUniqueId& id,
                                          const RankBody& body,
                                          std::chrono::seconds bound) {
  return forkRanks(nranks, &id, body, bound);
}

::testing::AssertionResult runRankThreads(int nranks, const RankBody& body,
                                          std::chrono::seconds bound) {
  mclUniqueId id;
  if (mclGetUniqueId(&id) != mclSuccess)
    return ::testing::AssertionFailure()
           << "mclGetUniqueId: " << mclGetLastError(nullptr);
  struct Shared {
    std::vector<std::unique_ptr<RankContext>> contexts;
    std::atomic<int> finished{0};
  };
  // Shared outlives a hung run: the abandoned threads still point into it.
  auto shared = std::make_shared<Shared>();
  for (int r = 0; r < nranks; ++r)
    shared->contexts.push_back(std::make_unique<RankContext>(r, nranks, id));
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r)
    threads.emplace_back([shared, body, r] {
      RankContext& ctx = *shared->contexts[static_cast<size_t>(r)];
      try {
        body(ctx);
      } catch (const std::exception& e) {
        ctx.fail("exception: %s", e.what());
      }
      shared->finished.fetch_add(1);
    });
  auto deadline = Clock::now() + bound;
  while (shared->finished.load() < nranks && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (shared->finished.load() < nranks) {
    for (auto& t : threads) t.detach();
    return ::testing::AssertionFailure()
           << "rank threads hung: killed after " << bound.count() << " s";
  }
  for (auto& t : threads) t.join();
  std::string report;
  for (const auto& ctx : shared->contexts) report += ctx->failures();
  if (report.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\n" << report;
}

}  // namespace mcl::test
