#include "platform/process_limits.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

namespace mcl::platform {

namespace {

ResourceLimit limitOf(int resource) {
  ResourceLimit l;
  struct rlimit r;
  if (getrlimit(resource, &r) != 0) return l;
  l.unlimited = r.rlim_cur == RLIM_INFINITY;
  l.soft = l.unlimited ? UINT64_MAX : static_cast<uint64_t>(r.rlim_cur);
  l.hard = r.rlim_max == RLIM_INFINITY ? UINT64_MAX
                                       : static_cast<uint64_t>(r.rlim_max);
  return l;
}

std::string limitText(uint64_t v) {
  return v == UINT64_MAX ? "unlimited" : std::to_string(v);
}

}  // namespace

ResourceLimit descriptorLimit() { return limitOf(RLIMIT_NOFILE); }
ResourceLimit lockedMemoryLimit() { return limitOf(RLIMIT_MEMLOCK); }

int openDescriptorCount() {
#if defined(__linux__)
  const char* dir = "/proc/self/fd";
#else
  const char* dir = "/dev/fd";
#endif
  DIR* d = opendir(dir);
  if (d == nullptr) return -1;
  int count = 0;
  while (const dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++count;
  closedir(d);
  return count - 1;  // not the one reading the directory
}

std::string limitHint(int err) {
  if (err == EMFILE) {
    const ResourceLimit l = descriptorLimit();
    std::string hint = "; this process has all " + limitText(l.soft) +
                       " descriptors its ulimit -n allows open";
    if (l.hard > l.soft)
      hint += " (raise it, up to the hard limit " + limitText(l.hard) +
              ", with ulimit -n)";
    else
      hint +=
          " (its hard limit too: raise it as root or in the "
          "container's or launcher's settings)";
    return hint + ", or destroy communicators it no longer needs";
  }
  if (err == ENFILE)
    return "; the whole system is out of descriptors (Linux: "
           "fs.file-max; macOS: kern.maxfiles)";
  if (err == ENOMEM)
    return "; the process is out of memory (check ulimit -v and the "
           "container's memory limit)";
  return "";
}

}  // namespace mcl::platform
