// Runs a shell command (mcl-perf, mostly) and collects its exit status and
// its output, stderr included.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace mcl::test {

struct CommandRun {
  int status = -1;
  std::string output;
};

inline CommandRun runShell(const std::string& command) {
  CommandRun run;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return run;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) run.output.append(buf, n);
  int status = pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace mcl::test
