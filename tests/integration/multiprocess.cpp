#include "multiprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstring>
#include <memory>
#include <thread>

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

::testing::AssertionResult runRanks(int nranks, const RankBody& body,
                                    std::chrono::seconds bound) {
  mclUniqueId id;
  if (mclGetUniqueId(&id) != mclSuccess)
    return ::testing::AssertionFailure()
           << "mclGetUniqueId: " << mclGetLastError(nullptr);
  return runRanksWithId(nranks, id, body, bound);
}

::testing::AssertionResult runRanksWithId(int nranks, const mclUniqueId& id,
                                          const RankBody& body,
                                          std::chrono::seconds bound) {
  fflush(stdout);
  fflush(stderr);
  std::vector<Child> children(static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    int fds[2];
    if (pipe(fds) != 0) return ::testing::AssertionFailure() << "pipe failed";
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      RankContext ctx(r, nranks, id);
      try {
        body(ctx);
      } catch (const std::exception& e) {
        ctx.fail("exception: %s", e.what());
      }
      writeAll(fds[1], ctx.failures());
      close(fds[1]);
      _exit(ctx.failed() ? 1 : 0);
    }
    close(fds[1]);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    children[static_cast<size_t>(r)] = Child{r, pid, fds[0], "", false, 0};
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
