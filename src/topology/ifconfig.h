// What macOS `ifconfig -a` says about each interface that getifaddrs does
// not: the MTU, whether a cable is in (status: active), and a bridge's
// members (Thunderbolt Bridge lists the Thunderbolt ports it swallowed).
// Pure parsing, so the tests run it on fixture text from Macs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "topology/inventory.h"

namespace mcl::topology {

struct IfconfigInterface {
  std::string name;
  bool up = false;       // UP among the flags
  bool running = false;  // RUNNING among the flags
  int mtu = 0;
  std::string status;  // "active", "inactive", or "" when not printed
  std::vector<std::string> members;  // bridge members, in order
  std::vector<InterfaceAddress> addresses;

  // A cable is in: "status: active", or RUNNING where no status is shown.
  bool carrier() const;
};

// Interfaces in the order printed. Lines it does not know are skipped;
// throws mcl::Error(mclInvalidArgument) when text that is not empty holds
// no interface at all, or an interface line has no flags.
std::vector<IfconfigInterface> parseIfconfig(std::string_view text);

}  // namespace mcl::topology
