#include "platform/host_identity.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#if defined(__APPLE__)
#include <crt_externs.h>
#include <sys/sysctl.h>
#include <uuid/uuid.h>
#endif

#if !defined(__APPLE__)
extern char** environ;
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
  // The pid namespace too: peer liveness checks need the same pids. (Not
  // the mount namespace: `ip netns exec` makes a new one per command but
  // keeps /dev/shm shared.)
  std::string boot = readFirstLine("/proc/sys/kernel/random/boot_id");
  if (boot.empty()) boot = hostName();
  std::string id = boot;
  for (const char* ns : {"/proc/self/ns/net", "/proc/self/ns/pid"}) {
    std::string target = linkTarget(ns);
    size_t open = target.find('[');
    id += "/" + (open == std::string::npos ? target : target.substr(open));
  }
  return id.substr(0, 100);
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

char** environment() {
#if defined(__APPLE__)
  return *_NSGetEnviron();  // environ is not visible from a dylib on macOS
#else
  return environ;
#endif
}

std::string hostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown-host";
  return buf;
}

uint64_t pidNamespace() {
#if defined(__linux__)
  struct stat st;
  if (stat("/proc/self/ns/pid", &st) == 0)
    return static_cast<uint64_t>(st.st_ino);
#endif
  return 0;
}

bool processAlive(int pid) {
  if (pid <= 0) return true;
  if (kill(pid, 0) != 0 && errno != EPERM) return false;
    // A process that exited but was not reaped yet (a zombie) still answers
    // kill(): look at its state.
#if defined(__linux__)
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  size_t close = text.rfind(')');
  if (close != std::string::npos && close + 2 < text.size()) {
    char state = text[close + 2];
    if (state == 'Z' || state == 'X') return false;
  }
#elif defined(__APPLE__)
  kinfo_proc info{};
  size_t size = sizeof(info);
  int query[4] = {CTL_KERN, KERN_PROC, KERN_PROC_PID, pid};
  if (sysctl(query, 4, &info, &size, nullptr, 0) == 0 && size > 0 &&
      info.kp_proc.p_stat == SZOMB)
    return false;
#endif
  return true;
}

}  // namespace mcl::platform
