#include "topology/macos_inventory.h"

#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "topology/networksetup.h"
#include "topology/thunderbolt_macos.h"

namespace mcl::topology {

namespace {

void applyIfconfig(HostInventory& inv, const std::string& text) {
  std::vector<IfconfigInterface> parsed;
  try {
    parsed = parseIfconfig(text);
  } catch (const Error& e) {
    inv.problems.push_back(e.what());
    return;
  }
  std::map<std::string, std::string> bridgeOf;
  std::map<std::string, const IfconfigInterface*> byName;
  for (const IfconfigInterface& i : parsed) {
    byName[i.name] = &i;
    for (const std::string& m : i.members) bridgeOf[m] = i.name;
  }
  for (InterfaceEntry& e : inv.interfaces) {
    auto it = byName.find(e.name);
    if (it == byName.end()) continue;
    e.mtu = it->second->mtu;
    e.carrier = e.up && it->second->carrier();
    auto bridge = bridgeOf.find(e.name);
    if (bridge != bridgeOf.end()) e.bridge = bridge->second;
  }
  // Thunderbolt Bridge counts as on when it is up and holds ports: an
  // empty bridge0 forwards nothing.
  auto bridge = byName.find(inv.bridgeDevice);
  if (inv.bridgeActive && bridge != byName.end())
    inv.bridgeActive = !bridge->second->members.empty();
}

}  // namespace

void describeMacInterfaces(HostInventory& inv, const MacToolOutputs& tools) {
  HardwarePorts ports;
  try {
    if (!tools.networksetup.empty())
      ports = parseNetworksetupPorts(tools.networksetup);
  } catch (const Error& e) {
    inv.problems.push_back(e.what());
  }
  std::map<std::string, int> receptacleOf;
  for (const auto& [number, device] : ports.thunderbolt)
    receptacleOf[device] = number;
  try {
    if (!tools.systemProfiler.empty()) {
      inv.thunderboltPorts =
          parseSystemProfilerThunderbolt(tools.systemProfiler);
      inv.thunderboltDetected = true;
    }
  } catch (const Error& e) {
    inv.problems.push_back(e.what());
  }
  inv.bridgeDevice = ports.bridgeDevice;
  for (InterfaceEntry& e : inv.interfaces) {
    auto tb = receptacleOf.find(e.name);
    if (e.medium == "loopback" || e.name == "lo0") {
      e.medium = "loopback";
    } else if (tb != receptacleOf.end()) {
      e.medium = "thunderbolt";
      e.receptacle = tb->second;
      for (const ThunderboltPort& p : inv.thunderboltPorts)
        if (p.receptacle == tb->second) e.speedGbps = p.speedGbps;
    } else if (!ports.bridgeDevice.empty() && e.name == ports.bridgeDevice) {
      e.medium = "bridge";
      inv.bridgeActive = e.up;
    } else if (ports.wifi.count(e.name) != 0) {
      e.medium = "wifi";
    } else if (ports.ethernet.count(e.name) != 0) {
      e.medium = "ethernet";
    } else {
      e.medium = "other";
    }
  }
  if (!tools.ifconfig.empty()) applyIfconfig(inv, tools.ifconfig);
  // `rdma_ctl status` says "enabled" or "disabled"; absent before macOS 26.2.
  if (tools.rdmaCtl.find("disabled") != std::string::npos)
    inv.rdmaState = "disabled";
  else if (tools.rdmaCtl.find("enabled") != std::string::npos)
    inv.rdmaState = "enabled";
}

std::vector<InterfaceEntry> interfacesFromIfconfig(
    const std::vector<IfconfigInterface>& parsed) {
  std::vector<InterfaceEntry> out;
  for (const IfconfigInterface& i : parsed) {
    InterfaceEntry e;
    e.name = i.name;
    e.up = i.up;
    e.addresses = i.addresses;
    out.push_back(e);
  }
  return out;
}

}  // namespace mcl::topology
