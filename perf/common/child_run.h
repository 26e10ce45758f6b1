// Running mcl-perf itself as a child with extra environment, its standard
// output and error captured together, within a time limit, optionally
// killed (SIGKILL) after a while: the steps of `mcl-perf report`.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace mcl::perf {

struct ChildRun {
  bool started = false;
  bool timedOut = false;  // killed at the limit
  bool killed = false;    // killed as asked (killAfter)
  int exitCode = -1;      // when it exited; -1 when a signal ended it
  int signal = 0;         // the signal that ended it, else 0
  double seconds = 0;     // from start to end
  std::string output;     // stdout and stderr interleaved
};

// The path of the running executable (to start it again).
std::string selfExecutable();

// Runs `argv` (argv[0] a path) with `env` added to this process'
// environment. killAfter > 0: SIGKILL after that long.
ChildRun runChild(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& env,
    std::chrono::milliseconds limit,
    std::chrono::milliseconds killAfter = std::chrono::milliseconds(0));

}  // namespace mcl::perf
