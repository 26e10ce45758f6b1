// The OS-touching half of the inventory: interfaces from getifaddrs plus
// sysfs (Linux) or networksetup/system_profiler (macOS), RDMA devices, and
// the machine. Every outside tool runs with a deadline; what fails becomes a
// `problems` entry, never an exception, so detection cannot stop a job.
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "base/error.h"
#include "platform/host_identity.h"
#include "platform/interfaces.h"
#include "platform/process_limits.h"
#include "platform/run_command.h"
#include "platform/shared_memory.h"
#include "topology/inventory.h"
#include "topology/macos_inventory.h"
#include "topology/text.h"

namespace mcl::topology {

namespace {

namespace fs = std::filesystem;

bool interfaceUp(int sock, const std::string& name) {
  ifreq request{};
  if (name.size() >= sizeof(request.ifr_name)) return false;
  name.copy(request.ifr_name, name.size());
  if (ioctl(sock, SIOCGIFFLAGS, &request) != 0) return false;
  return (request.ifr_flags & IFF_UP) != 0;
}

// Every interface the OS has, with or without addresses: a Thunderbolt port
// without IPv4 is exactly what a check must be able to report.
std::vector<InterfaceEntry> listAllInterfaces() {
  std::vector<InterfaceEntry> out;
  std::map<std::string, size_t> byName;
  int sock = socket(AF_INET, SOCK_DGRAM, 0);
  if (struct if_nameindex* names = if_nameindex()) {
    for (struct if_nameindex* n = names; n->if_index != 0; ++n) {
      InterfaceEntry e;
      e.name = n->if_name;
      e.up = sock >= 0 && interfaceUp(sock, e.name);
      byName[e.name] = out.size();
      out.push_back(e);
    }
    if_freenameindex(names);
  }
  if (sock >= 0) close(sock);
  // Down ones too: a cable pulled out at a port switched off keeps its
  // address there, which names the cable (down_cable_checks.h).
  for (const platform::NetInterface& n : platform::listInterfaces(true)) {
    auto it = byName.find(n.name);
    if (it == byName.end()) {
      InterfaceEntry e;
      e.name = n.name;
      e.up = n.up;
      it = byName.emplace(n.name, out.size()).first;
      out.push_back(e);
    }
    InterfaceEntry& e = out[it->second];
    e.addresses.push_back({n.address.host(), n.prefixLength});
    if (n.loopback) e.medium = "loopback";
  }
  return out;
}

#if defined(__linux__)
std::string readSmallFile(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream content;
  content << in.rdbuf();
  return std::string(trim(content.str()));
}

// Hosts made of network namespaces share one host name: add the name
// `ip netns` gave this process's namespace, if any, so they can be told
// apart ("vm/mcl-ring3-h0").
std::string nameWithNetns(std::string name) {
  struct stat self;
  if (stat("/proc/self/ns/net", &self) != 0) return name;
  std::error_code ec;
  for (const fs::directory_entry& e :
       fs::directory_iterator("/run/netns", ec)) {
    struct stat other;
    if (stat(e.path().c_str(), &other) == 0 && other.st_ino == self.st_ino &&
        other.st_dev == self.st_dev)
      return name + "/" + e.path().filename().string();
  }
  return name;
}

void describeLinuxInterfaces(HostInventory& inv) {
  const fs::path net = "/sys/class/net";
  std::error_code ec;
  for (InterfaceEntry& e : inv.interfaces) {
    fs::path dir = net / e.name;
    if (e.medium == "loopback" || e.name == "lo") {
      e.medium = "loopback";
    } else if (e.name.rfind("thunderbolt", 0) == 0) {
      e.medium = "thunderbolt";
    } else if (fs::exists(dir / "wireless", ec) || e.name.rfind("wl", 0) == 0) {
      // wl*: the kernel's own names (wlan0) and systemd's (wlp2s0); some
      // drivers (and containers) show no wireless directory.
      e.medium = "wifi";
    } else if (fs::exists(dir / "bridge", ec)) {
      e.medium = "bridge";
    } else if (readSmallFile(dir / "type") == "1") {
      e.medium = "ethernet";
    } else {
      e.medium = "other";
    }
    e.mtu = std::atoi(readSmallFile(dir / "mtu").c_str());
    // Reading carrier fails (EINVAL) on an interface that is down: no link.
    e.carrier = e.up && readSmallFile(dir / "carrier") == "1";
    // A bridge port's master; a bond's members have one too.
    fs::path master = fs::read_symlink(dir / "master", ec);
    if (!ec && fs::exists(net / master.filename() / "bridge", ec))
      e.bridge = master.filename().string();
    // Mb/s; -1 or unreadable when the driver does not know.
    std::string speed = readSmallFile(dir / "speed");
    char* end = nullptr;
    long mbps = std::strtol(speed.c_str(), &end, 10);
    if (!speed.empty() && *end == '\0' && mbps > 0)
      e.speedGbps = static_cast<double>(mbps) / 1000.0;
  }
}

// thunderbolt-net interfaces hang under a service of the remote host's
// XDomain ("0-1.0" under "0-1"): that entry gives the link's speed.
void detectLinuxThunderbolt(HostInventory& inv) {
  try {
    inv.thunderboltHosts = parseThunderboltSysfs(
        readThunderboltSysfs("/sys/bus/thunderbolt/devices"));
  } catch (const Error& e) {
    inv.problems.push_back(e.what());
    return;
  }
  std::error_code ec;
  for (InterfaceEntry& e : inv.interfaces) {
    if (e.medium != "thunderbolt") continue;
    fs::path service =
        fs::read_symlink("/sys/class/net/" + e.name + "/device", ec);
    if (ec) continue;
    std::string entry = service.filename().string();
    entry = entry.substr(0, entry.find('.'));
    for (const XDomainHost& x : inv.thunderboltHosts)
      if (x.entry == entry) {
        e.thunderboltEntry = entry;
        if (x.rxGbps > 0) e.speedGbps = x.rxGbps * std::max(x.rxLanes, 1);
      }
  }
}

void detectLinuxRdma(HostInventory& inv) {
  const fs::path root = "/sys/class/infiniband";
  std::error_code ec;
  fs::directory_iterator it(root, ec);
  if (ec) {
    inv.rdmaState = "none";
    return;
  }
  for (const fs::directory_entry& entry : it) {
    RdmaDevice d;
    d.name = entry.path().filename().string();
    // "4: ACTIVE"
    d.active = readSmallFile(entry.path() / "ports/1/state").find("ACTIVE") !=
               std::string::npos;
    d.netdev = readSmallFile(entry.path() / "ports/1/gid_attrs/ndevs/0");
    if (d.netdev.empty()) {
      fs::directory_iterator nets(entry.path() / "device/net", ec);
      if (!ec && nets != fs::directory_iterator())
        d.netdev = nets->path().filename().string();
    }
    inv.rdmaDevices.push_back(d);
  }
  inv.rdmaState = inv.rdmaDevices.empty() ? "none" : "enabled";
}
#endif

#if defined(__APPLE__)
using Deadline = std::chrono::steady_clock::time_point;

// The system's own copy of a tool, not whatever PATH finds first (launchd,
// ssh and conda environments may lack /usr/sbin, or shadow it).
std::string systemTool(const std::string& name) {
  for (const char* dir : {"/usr/sbin/", "/usr/bin/", "/sbin/"}) {
    std::string path = dir + name;
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return name;
}

// At most `seconds`, and at most half of what is left before the deadline.
std::chrono::milliseconds toolBudget(int seconds, Deadline deadline) {
  auto half = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - std::chrono::steady_clock::now()) /
              2;
  std::chrono::milliseconds cap = std::chrono::seconds(seconds);
  return std::max(std::chrono::milliseconds(0), std::min(cap, half));
}

// Runs a macOS tool; on failure records why and returns "".
std::string toolOutput(HostInventory& inv, std::vector<std::string> argv,
                       int seconds, Deadline deadline) {
  argv[0] = systemTool(argv[0]);
  std::chrono::milliseconds budget = toolBudget(seconds, deadline);
  platform::CommandResult r = platform::runCommand(argv, budget);
  if (!r.started) {
    inv.problems.push_back("could not run " + argv[0]);
  } else if (r.timedOut) {
    inv.problems.push_back(argv[0] + " did not answer within " +
                           std::to_string(budget.count()) + " ms");
  } else if (r.exitCode != 0) {
    inv.problems.push_back(argv[0] + " exited with status " +
                           std::to_string(r.exitCode));
  } else {
    return r.output;
  }
  return "";
}

void detectMacInterfaces(HostInventory& inv, Deadline deadline) {
  MacToolOutputs tools;
  tools.networksetup =
      toolOutput(inv, {"networksetup", "-listallhardwareports"}, 10, deadline);
  tools.systemProfiler = toolOutput(
      inv, {"system_profiler", "SPThunderboltDataType", "-json"}, 20, deadline);
  tools.ifconfig = toolOutput(inv, {"ifconfig", "-a"}, 5, deadline);
  // Absent before macOS 26.2: not a problem, RDMA is then just unknown.
  platform::CommandResult r = platform::runCommand(
      {systemTool("rdma_ctl"), "status"}, toolBudget(5, deadline));
  if (r.started && !r.timedOut && r.exitCode == 0) tools.rdmaCtl = r.output;
  describeMacInterfaces(inv, tools);
}
#endif

// What this process may take on this host (limits of the shell or
// launcher that started it).
HostLimits detectLimits() {
  auto limit = [](uint64_t v) {
    return v == UINT64_MAX ? HostLimits::kUnlimited
                           : static_cast<int64_t>(
                                 std::min<uint64_t>(v, uint64_t{INT64_MAX}));
  };
  HostLimits l;
  l.known = true;
  const platform::SharedMemoryRoom room = platform::sharedMemoryRoom();
  l.shmKnown = room.known;
  l.shmTotalBytes = limit(room.totalBytes);
  l.shmFreeBytes = limit(room.freeBytes);
  const platform::ResourceLimit files = platform::descriptorLimit();
  l.openFiles = limit(files.soft);
  l.openFilesHard = limit(files.hard);
  l.lockedBytes = limit(platform::lockedMemoryLimit().soft);
  return l;
}

}  // namespace

HostInventory detectInventory(bool withLinks,
                              std::chrono::steady_clock::time_point deadline) {
  (void)deadline;  // only the macOS tools need it
  HostInventory inv;
  inv.identity = platform::hostIdentity();
  inv.name = platform::hostName();
#if defined(__linux__)
  inv.name = nameWithNetns(inv.name);
#endif
  inv.machine = describeMachine();
  inv.limits = detectLimits();
  if (!withLinks) return inv;
  inv.interfaces = listAllInterfaces();
#if defined(__linux__)
  describeLinuxInterfaces(inv);
  detectLinuxThunderbolt(inv);
  detectLinuxRdma(inv);
#elif defined(__APPLE__)
  detectMacInterfaces(inv, deadline);
#endif
  return inv;
}

}  // namespace mcl::topology
