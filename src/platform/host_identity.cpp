#include "platform/host_identity.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

#if defined(__APPLE__)
#include <uuid/uuid.h>
#endif

namespace mcl::platform {

namespace {

#if defined(__linux__)
std::string readFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string linkTarget(const char* path) {
  char buf[256];
  ssize_t n = readlink(path, buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  return std::string(buf, static_cast<size_t>(n));
}
#endif

}  // namespace

std::string hostIdentity() {
#if defined(__linux__)
  // Two network namespaces on one kernel are two hosts as far as the network
  // goes (the multi-host tests rely on it), but they share /dev/shm, so the
  // namespace is part of the identity.
  std::string boot = readFirstLine("/proc/sys/kernel/random/boot_id");
  std::string netns = linkTarget("/proc/self/ns/net");
  if (boot.empty()) boot = hostName();
  return (boot + "/" + netns).substr(0, 100);
#elif defined(__APPLE__)
  uuid_t id;
  timespec wait = {1, 0};
  if (gethostuuid(id, &wait) == 0) {
    uuid_string_t text;
    uuid_unparse_lower(id, text);
    return text;
  }
  return hostName();
#else
  return hostName();
#endif
}

std::string hostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown-host";
  return buf;
}

bool processAlive(int pid) {
  if (pid <= 0) return true;
  return kill(pid, 0) == 0 || errno == EPERM;
}

}  // namespace mcl::platform
