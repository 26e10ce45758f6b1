#include "platform/run_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "platform/host_identity.h"

namespace mcl::platform {

namespace {

// Waits for pid, killing it first when `kill` is set; never leaves a zombie.
int reap(pid_t pid, bool killFirst) {
  if (killFirst) ::kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

CommandResult runCommand(const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout, size_t maxBytes) {
  CommandResult result;
  if (argv.empty()) return result;
  int fds[2];
  if (pipe(fds) != 0) return result;
  // Close-on-exec on our end so other children (of other threads) do not
  // keep the pipe open and delay end-of-file.
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null",
                                   O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(),
                        environment());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return result;
  }
  result.started = true;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[16384];
  bool overflow = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timedOut = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;  // the deadline check above ends the loop
    ssize_t got = read(fds[0], buf, sizeof(buf));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // end of file: the program closed its output
    if (result.output.size() + static_cast<size_t>(got) > maxBytes) {
      overflow = true;
      break;
    }
    result.output.append(buf, static_cast<size_t>(got));
  }
  close(fds[0]);
  int code = reap(pid, result.timedOut || overflow);
  if (!result.timedOut) result.exitCode = overflow ? -1 : code;
  return result;
}

}  // namespace mcl::platform
