#include "common/child_run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

namespace mcl::perf {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxOutputBytes = 8u << 20;

}  // namespace

std::string selfExecutable() {
#ifdef __APPLE__
  char path[PATH_MAX];
  uint32_t size = sizeof(path);
  if (_NSGetExecutablePath(path, &size) == 0) {
    char real[PATH_MAX];
    if (realpath(path, real) != nullptr) return real;
    return path;
  }
  return "mcl-perf";
#else
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "mcl-perf";
  path[n] = '\0';
  return path;
#endif
}

ChildRun runChild(const std::vector<std::string>& argv,
                  const std::vector<std::pair<std::string, std::string>>& env,
                  std::chrono::milliseconds limit,
                  std::chrono::milliseconds killAfter) {
  ChildRun run;
  int fds[2];
  if (pipe(fds) != 0) return run;
  const auto start = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return run;
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    for (const auto& [name, value] : env)
      setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  run.started = true;
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  const auto end = start + limit;
  const auto killAt = start + killAfter;
  bool open = true;
  char buf[4096];
  while (open) {
    const auto now = Clock::now();
    if (killAfter.count() > 0 && !run.killed && now >= killAt) {
      kill(pid, SIGKILL);
      run.killed = true;
    }
    if (now >= end && !run.timedOut) {
      kill(pid, SIGKILL);
      run.timedOut = true;
    }
    auto next = run.timedOut ? now + std::chrono::milliseconds(100) : end;
    if (killAfter.count() > 0 && !run.killed) next = std::min(next, killAt);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(next - now)
            .count();
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, int(std::max<int64_t>(1, std::min<int64_t>(ms, 1000)))) <=
        0)
      continue;
    const ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n > 0) {
      if (run.output.size() < kMaxOutputBytes)
        run.output.append(buf, size_t(n));
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      open = false;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (WIFEXITED(status)) run.exitCode = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
  return run;
}

}  // namespace mcl::perf
