// What a process holds, counted from /proc (Linux): open descriptors,
// threads, mcl's shared-memory segments. Leak tests compare the counts
// across many init/destroy cycles.
#pragma once

#include <dirent.h>

#include <cstddef>
#include <fstream>
#include <set>
#include <string>

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
#endif

}  // namespace mcl::test
