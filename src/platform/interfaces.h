// The host's network interfaces with their IP addresses (getifaddrs, on
// macOS and Linux alike): what the TCP transport and the rendezvous choose
// from.
#pragma once

#include <string>
#include <vector>

#include "platform/socket.h"

namespace mcl::platform {

struct NetInterface {
  std::string name;       // "en2", "eth0", "lo"
  SocketAddress address;  // port 0
  int prefixLength = 0;   // of the subnet
  bool loopback = false;
  bool pointToPoint = false;  // IFF_POINTOPOINT (some tunnels, not veth)
  bool up = true;             // IFF_UP
};

// Interfaces that are up and have an IPv4 address or a global IPv6 address
// (link-local IPv6 needs a scope and is skipped), in the OS's order; with
// evenDown, those switched off too (an address kept on a port that is
// down: the doctor names the cable it belongs to).
std::vector<NetInterface> listInterfaces(bool evenDown = false);

// True when a and b lie in the same subnet of prefixLength bits.
bool sameSubnet(const SocketAddress& a, const SocketAddress& b,
                int prefixLength);

}  // namespace mcl::platform
