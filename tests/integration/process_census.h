// What a process holds, counted from /proc (Linux): open descriptors,
// threads, mcl's shared-memory segments. Leak tests compare the counts
// across many init/destroy cycles.
#pragma once

#include <dirent.h>

#include <chrono>
#include <cstddef>
#include <fstream>
#include <set>
#include <string>
#include <thread>

namespace mcl::test {

#if defined(__linux__)
inline std::set<std::string> listDir(const char* dir, const char* prefix) {
  std::set<std::string> names;
  if (DIR* d = opendir(dir)) {
    while (dirent* e = readdir(d))
      if (std::string(e->d_name).rfind(prefix, 0) == 0) names.insert(e->d_name);
    closedir(d);
  }
  return names;
}

// Entries but "." and "..": descriptors of /proc/self/fd, threads of
// /proc/self/task.
inline size_t countEntries(const char* dir) {
  size_t n = 0;
  for (const auto& name : listDir(dir, ""))
    if (name != "." && name != "..") ++n;
  return n;
}

// Descriptors and threads of this process at one moment.
struct ProcessCensus {
  size_t fds = 0;
  size_t threads = 0;

  static ProcessCensus take() {
    return {countEntries("/proc/self/fd"), countEntries("/proc/self/task")};
  }
  // "" when `later` holds as many, else what grew or shrank.
  std::string changeTo(const ProcessCensus& later) const {
    std::string s;
    if (later.fds != fds)
      s += std::to_string(fds) + " fds became " + std::to_string(later.fds);
    if (later.threads != threads)
      s += (s.empty() ? "" : ", ") + std::to_string(threads) +
           " threads became " + std::to_string(later.threads);
    return s;
  }
};

// Shared-memory segments of mcl mapped into this process.
inline int mappedSegments() {
  int n = 0;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find("/dev/shm/mcl-") != std::string::npos) ++n;
  return n;
}

// A census once the last init's rendezvous root (a detached thread of the
// rank that made the id, with its listening socket) has wound down: it
// ends just after the communicator is built, so it may still be there for
// a moment, longer on a busy machine. Waits until `want` holds (or,
// without `want`, until the takes agree for 200 ms), at most 10 s, and
// returns the last take: a leak stays, and is there after the wait.
inline ProcessCensus settledCensus(const ProcessCensus* want) {
  ProcessCensus now = ProcessCensus::take();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int agreeing = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ProcessCensus next = ProcessCensus::take();
    if (want != nullptr) {
      now = next;
      if (want->changeTo(now).empty()) break;
      continue;
    }
    agreeing = now.changeTo(next).empty() ? agreeing + 1 : 0;
    now = next;
    if (agreeing >= 10) break;
  }
  return now;
}
#endif

}  // namespace mcl::test
