// Progress of a long run on stderr, rewritten in place ("mcl-perf:
// allreduce 3/24: 1048576 B"), only where someone watches: on the printing
// rank, when stderr is a terminal. Logs, pipes and CI never see it; the
// line is cleared when the run ends.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace mcl::perf {

class Progress {
 public:
  // what: the run's name; total: how many steps it has.
  Progress(bool printer, std::string what, size_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // One more step begins; detail says which.
  void step(const std::string& detail);
  // Erases the line, before something is printed on the terminal.
  void clear();

 private:
  bool enabled_;
  std::string what_;
  size_t total_;
  size_t done_ = 0;
  size_t shownWidth_ = 0;
  std::chrono::steady_clock::time_point lastShown_{};
};

}  // namespace mcl::perf
