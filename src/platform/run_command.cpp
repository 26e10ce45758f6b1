#include "platform/run_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "platform/host_identity.h"

namespace mcl::platform {

namespace {

using Clock = std::chrono::steady_clock;

// Waits for pid until `deadline`, else kills its process group (the tool
// and anything it started). Leftovers of a tool that exited are killed too,
// before the tool is reaped: while its zombie holds the pid, the group id
// cannot belong to anyone else. Never blocks past the deadline by more than
// the kill takes; never leaves a zombie.
int reapBy(pid_t pid, Clock::time_point deadline, bool* killed) {
  for (;;) {
    siginfo_t info{};
    int r = waitid(P_PID, static_cast<id_t>(pid), &info,
                   WEXITED | WNOHANG | WNOWAIT);
    if (r == 0 && info.si_pid == pid) break;  // exited, not reaped yet
    if (r < 0 && errno != EINTR) break;
    if (Clock::now() >= deadline) {
      *killed = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void closeOnExec(int fd) { fcntl(fd, F_SETFD, FD_CLOEXEC); }

}  // namespace

namespace {

// The environment for a system tool: this process's, without the job's
// secrets. A tool needs none of them, and what it passes on (to its own
// children, its logs, a crash report) should not carry them.
std::vector<char*> environmentWithoutSecrets() {
  static const char* const kSecrets[] = {
      "MCL_SECRET=", "MCL_UNIQUE_ID=",
      "OMPI_MCA_orte_precondition_transports="};
  std::vector<char*> env;
  for (char** e = environment(); *e != nullptr; ++e) {
    bool secret = false;
    for (const char* prefix : kSecrets)
      secret = secret || strncmp(*e, prefix, strlen(prefix)) == 0;
    if (!secret) env.push_back(*e);
  }
  env.push_back(nullptr);
  return env;
}

}  // namespace

CommandResult runCommand(const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout, size_t maxBytes) {
  CommandResult result;
  if (argv.empty()) return result;
  int fds[2];
  if (pipe(fds) != 0) return result;
  // Close-on-exec on both ends, so programs other threads start do not keep
  // the pipe open (which would delay end-of-file); the child gets its copy
  // through dup2, which clears the flag.
  closeOnExec(fds[0]);
  closeOnExec(fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null",
                                   O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  // Its own process group, so a timeout can kill everything it started.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> env = environmentWithoutSecrets();
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(),
                        env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return result;
  }
  result.started = true;
  auto deadline = Clock::now() + timeout;
  char buf[16384];
  bool overflow = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Clock::now());
    if (left.count() <= 0) break;
    pollfd p{fds[0], POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(left.count()));
    if (n <= 0) continue;  // EINTR or the deadline: the check above decides
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
  bool killed = false;
  int code = reapBy(pid, overflow ? Clock::now() : deadline, &killed);
  result.timedOut = killed && !overflow;
  result.exitCode = killed || overflow ? -1 : code;
  return result;
}

}  // namespace mcl::platform
