// What Linux's /sys/bus/thunderbolt/devices says about the remote hosts
// (XDomain connections) plugged into this machine. Parsing works on a
// snapshot (path -> file content) so tests need no sysfs; reading the real
// directory is the one OS-touching function, kept apart.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace mcl::topology {

// Relative path under the devices directory ("0-1/rx_speed") -> content.
using SysfsSnapshot = std::map<std::string, std::string>;

// One remote host reached over Thunderbolt.
struct XDomainHost {
  std::string entry;       // sysfs name, like "0-1"
  std::string deviceName;  // device_name, may be empty
  std::string vendorName;  // vendor_name, may be empty
  std::string uniqueId;    // unique_id: the remote host's UUID
  double rxGbps = 0;       // rx_speed per lane; 0 when not reported
  double txGbps = 0;
  int rxLanes = 0;  // 0 when not reported
  int txLanes = 0;
  // A service with key "network" exists: thunderbolt-net (IP over
  // Thunderbolt) can run on this link.
  bool networkService = false;
};

// XDomain entries are those whose uevent says DEVTYPE=thunderbolt_xdomain,
// or that have service children ("0-1.1" with a "key" file), since only
// XDomains carry services. Sorted by entry name. Throws mcl::Error
// (mclInvalidArgument) naming the path for a missing unique_id or an
// unreadable speed or lane count.
std::vector<XDomainHost> parseThunderboltSysfs(const SysfsSnapshot& snapshot);

// Reads the files the parser needs from each entry of `devicesDir`
// (normally /sys/bus/thunderbolt/devices). A missing directory (no
// Thunderbolt, or not Linux) gives an empty snapshot; unreadable files are
// left out.
SysfsSnapshot readThunderboltSysfs(const std::string& devicesDir);

}  // namespace mcl::topology
