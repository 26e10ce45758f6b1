// What `networksetup -listallhardwareports` says about Thunderbolt: which
// network interface (enX) belongs to port "Thunderbolt N" (N is the
// receptacle number system_profiler gives), so port -> enX -> rdma_enX.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>

namespace mcl::topology {

struct HardwarePorts {
  // Receptacle number -> interface name ("en2").
  std::map<int, std::string> thunderbolt;
  // "Thunderbolt Bridge" exists. Left on in a loop of Macs it forwards
  // broadcasts around the loop forever (a storm), so callers warn about it.
  bool bridgePresent = false;
  std::string bridgeDevice;  // usually "bridge0"
  // Devices of the other ports, by medium: "Wi-Fi" -> wifi; a port whose
  // name says Ethernet or LAN ("USB 10/100/1000 LAN") -> ethernet.
  std::set<std::string> wifi;
  std::set<std::string> ethernet;
};

// Ports other than "Thunderbolt <number>" (Wi-Fi, Ethernet, adapters such
// as "Thunderbolt Ethernet Slot 1") and lines that are not "Hardware
// Port:"/"Device:" only sort devices into wifi/ethernet. Throws mcl::Error
// (mclInvalidArgument) for a Thunderbolt port with no device or a
// number seen twice.
HardwarePorts parseNetworksetupPorts(std::string_view text);

}  // namespace mcl::topology
