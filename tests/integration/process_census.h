// What a process holds, counted from /proc (Linux): open descriptors,
// threads, mcl's shared-memory segments. Leak tests compare the counts
// across many init/destroy cycles.
#pragma once

#include <dirent.h>

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

inline size_t countEntries(const char* dir) { return listDir(dir, "").size(); }

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
