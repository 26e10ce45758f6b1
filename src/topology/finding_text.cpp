#include "topology/finding_text.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace mcl::topology {

namespace {

// 30 -> "255.255.255.252" (networksetup and ifconfig take masks).
std::string ipv4Mask(int prefix) {
  const uint32_t mask =
      prefix <= 0 ? 0 : ~uint32_t{0} << (32 - (prefix > 32 ? 32 : prefix));
  return std::to_string(mask >> 24) + "." + std::to_string((mask >> 16) & 255) +
         "." + std::to_string((mask >> 8) & 255) + "." +
         std::to_string(mask & 255);
}

}  // namespace

std::string hostLabel(const Cluster& c, int h) {
  if (h < 0 || h >= static_cast<int>(c.hosts.size()))
    return "host " + std::to_string(h);
  return "host " + std::to_string(h) + " (" + c.hosts[size_t(h)].name + ")";
}

std::string interfaceLabel(const Cluster& c, int host,
                           const std::string& interface) {
  return hostLabel(c, host) + " " + interface;
}

std::string endName(const LinkEnd& e) {
  if (!e.interface.empty()) return e.interface;
  if (e.receptacle > 0) return "Thunderbolt " + std::to_string(e.receptacle);
  return e.address;
}

std::string endLabel(const Cluster& c, const LinkEnd& e) {
  return hostLabel(c, e.host) + " " + endName(e);
}

std::string cableLabel(const Cluster& c, const ClusterLink& l) {
  return endLabel(c, l.a) + " <-> " + endLabel(c, l.b);
}

bool looksLikeMac(const ClusterHost& h) {
  return h.hasInventory &&
         (h.inventory.thunderboltDetected || !h.inventory.bridgeDevice.empty());
}

std::string setAddressCommand(const ClusterHost& h, const InterfaceEntry& e,
                              const std::string& address, int prefix) {
  const bool v6 = address.find(':') != std::string::npos;
  if (!looksLikeMac(h))
    return "`sudo ip addr add " + address + "/" + std::to_string(prefix) +
           " dev " + e.name + "`";
  if (e.receptacle > 0 && !v6)
    return "`sudo networksetup -setmanual \"Thunderbolt " +
           std::to_string(e.receptacle) + "\" " + address + " " +
           ipv4Mask(prefix) + "`";
  return "`sudo ifconfig " + e.name + (v6 ? " inet6 " : " inet ") + address +
         (v6 ? " prefixlen " + std::to_string(prefix)
             : " netmask " + ipv4Mask(prefix)) +
         " alias`";
}

}  // namespace mcl::topology
