// A Mac's inventory from what its tools print: `networksetup
// -listallhardwareports` (which enX is "Thunderbolt N", Wi-Fi, the
// bridge), `system_profiler SPThunderboltDataType -json` (ports, speeds,
// what is plugged in), `ifconfig -a` (MTU, cable in, bridge members) and
// `rdma_ctl status`. Pure, so the tests feed it fixture text from Macs and
// every mistake a Mac owner makes is checked here without a Mac.
#pragma once

#include <string>
#include <vector>

#include "topology/ifconfig.h"
#include "topology/inventory.h"

namespace mcl::topology {

// Each tool's output; "" for a tool that failed (the caller records why in
// the inventory's problems).
struct MacToolOutputs {
  std::string networksetup;
  std::string systemProfiler;
  std::string ifconfig;
  std::string rdmaCtl;
};

// Fills what the tools say about inv.interfaces (medium, Thunderbolt port,
// speed, MTU, carrier, bridge) and the inventory's ports, bridge and RDMA
// state. Output that cannot be read becomes a problems entry.
void describeMacInterfaces(HostInventory& inv, const MacToolOutputs& tools);

// The interfaces `ifconfig -a` printed, as getifaddrs would list them
// (name, up, addresses); for fixtures of whole Macs.
std::vector<InterfaceEntry> interfacesFromIfconfig(
    const std::vector<IfconfigInterface>& parsed);

}  // namespace mcl::topology
