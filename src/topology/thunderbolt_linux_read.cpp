// The one function of the Linux Thunderbolt code that touches the OS: it
// copies the few sysfs files the parser needs into a SysfsSnapshot.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "topology/thunderbolt_linux.h"

namespace mcl::topology {

namespace {

// Only these: some sysfs attributes (nvm, authorized writes) block, fail or
// have side effects when read, so the reader never lists files blindly.
constexpr const char* kFiles[] = {
    "uevent",   "device_name", "vendor_name", "unique_id", "rx_speed",
    "tx_speed", "rx_lanes",    "tx_lanes",    "key",
};

}  // namespace

SysfsSnapshot readThunderboltSysfs(const std::string& devicesDir) {
  namespace fs = std::filesystem;
  SysfsSnapshot snapshot;
  std::error_code ec;
  fs::directory_iterator it(devicesDir, ec);
  if (ec) return snapshot;
  for (const fs::directory_entry& entry : it) {
    // Entries under /sys/bus/.../devices are symlinks to directories.
    if (!entry.is_directory(ec)) continue;
    std::string name = entry.path().filename().string();
    for (const char* file : kFiles) {
      std::ifstream in(entry.path() / file);
      if (!in) continue;
      std::ostringstream content;
      content << in.rdbuf();
      if (in.bad()) continue;
      snapshot[name + "/" + file] = content.str();
    }
  }
  return snapshot;
}

}  // namespace mcl::topology
