// Running a system command and reading what it prints, with a deadline: the
// topology detection asks macOS's own tools (system_profiler, networksetup),
// and a tool that hangs must not hang communicator creation.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace mcl::platform {

struct CommandResult {
  bool started = false;   // false: the program was not found or not runnable
  bool timedOut = false;  // killed at the deadline
  int exitCode = -1;      // valid when started && !timedOut
  std::string output;     // standard output (standard error is discarded)
};

// Runs argv[0] (looked up on PATH) with the arguments argv[1..], without a
// shell. Output beyond maxBytes is discarded and the program is killed.
CommandResult runCommand(const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout,
                         size_t maxBytes = 16u << 20);

}  // namespace mcl::platform
