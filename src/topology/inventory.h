// What one host knows about itself that the cluster picture needs: its
// processor, its network interfaces (with their subnets, medium and speed),
// its Thunderbolt ports and the peers they reach, whether Thunderbolt Bridge
// is on, and its RDMA devices. Each host's lowest rank detects it; the ranks
// all-gather the inventories (as JSON) and every rank builds the same
// cluster from them.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "topology/machine.h"
#include "topology/thunderbolt_linux.h"
#include "topology/thunderbolt_macos.h"

namespace mcl::topology {

struct InterfaceAddress {
  std::string address;  // "192.168.7.1", "fd00::1"
  int prefixLength = 0;
};

struct InterfaceEntry {
  std::string name;  // "en2", "thunderbolt0", "eth0"
  // "thunderbolt", "ethernet", "wifi", "bridge", "loopback" or "other".
  std::string medium;
  bool up = false;
  double speedGbps = 0;  // 0 when the OS does not say
  int receptacle = 0;    // Thunderbolt port number (macOS), else 0
  // Linux thunderbolt-net: the sysfs entry of the remote host ("0-1").
  std::string thunderboltEntry;
  std::vector<InterfaceAddress> addresses;
  int mtu = 0;          // bytes; 0 when not known
  bool carrier = true;  // something answers at the link layer (cable in)
  std::string bridge;   // the bridge it is enslaved to ("bridge0"), or ""

  bool hasIpv4() const;
  // An address other than loopback and link-local (169.254/16, fe80::/10).
  bool hasRoutableAddress() const;
};

struct RdmaDevice {
  std::string name;     // "rdma_en2", "mlx5_0"
  std::string netdev;   // the network interface it sits on; may be empty
  bool active = false;  // port state ACTIVE
};

// What the host lets one process of a job take, as the host's lowest rank
// sees it: shared memory (Linux' /dev/shm, after this communicator took
// its rings), descriptors and locked memory. kUnlimited where no limit is
// set; known = false in inventories of an older mcl.
struct HostLimits {
  static constexpr int64_t kUnlimited = -1;
  bool known = false;
  bool shmKnown = false;  // false on macOS: no /dev/shm bound
  int64_t shmTotalBytes = 0;
  int64_t shmFreeBytes = 0;
  int64_t openFiles = 0;      // ulimit -n
  int64_t openFilesHard = 0;  // what it may be raised to
  int64_t lockedBytes = 0;    // ulimit -l, in bytes (RDMA pins memory)
};

struct HostInventory {
  std::string identity;  // platform::hostIdentity()
  std::string name;      // host name
  MachineInfo machine;
  HostLimits limits;
  std::vector<InterfaceEntry> interfaces;
  // macOS: every Thunderbolt port and what is plugged into it.
  std::vector<ThunderboltPort> thunderboltPorts;
  bool thunderboltDetected = false;  // the ports above were looked for
  // Linux: the remote hosts /sys/bus/thunderbolt shows (XDomains).
  std::vector<XDomainHost> thunderboltHosts;
  bool bridgeActive = false;  // Thunderbolt Bridge is up
  std::string bridgeDevice;   // "bridge0"
  // "enabled", "disabled", "none" (no devices) or "unknown".
  std::string rdmaState = "unknown";
  std::vector<RdmaDevice> rdmaDevices;
  // Detection steps that did not work (a tool missing, timing out or
  // printing something unreadable): shown as findings, never fatal.
  std::vector<std::string> problems;

  const InterfaceEntry* findInterface(const std::string& name) const;
};

// Looks at this host. withLinks = false fills only identity, name and
// machine (a single-host communicator needs no more, and on macOS the
// Thunderbolt tools take a noticeable fraction of a second). The outside
// tools get at most half the time left before `deadline` each, so a slow
// one leaves the rest of init time to finish (and is named as a problem).
HostInventory detectInventory(bool withLinks,
                              std::chrono::steady_clock::time_point deadline);

nlohmann::ordered_json inventoryToJson(const HostInventory& inventory);
// Throws mcl::Error(mclInvalidArgument) naming the field on malformed input.
HostInventory inventoryFromJson(const nlohmann::json& json);

}  // namespace mcl::topology
