#include "core/bootstrap/rendezvous_addresses.h"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "base/error.h"
#include "core/params/params.h"
#include "platform/interfaces.h"
#include "topology/ifname_filter.h"

namespace mcl {

namespace {

// What a unique id holds besides the first address: 87 bytes, 7 per IPv4
// address, 19 per IPv6 one.
constexpr size_t kMaxAddresses = 13;

}  // namespace

std::vector<platform::SocketAddress> rendezvousAddresses() {
  auto filter =
      topology::parseIfnameFilter(paramValue("MCL_SOCKET_IFNAME").text);
  std::vector<platform::NetInterface> nics;
  bool explicitFilter = !filter.empty();
  bool haveLan = false;
  for (const auto& n : platform::listInterfaces()) {
    if (!filter.matches(n.name)) continue;
    // Unless MCL_SOCKET_IFNAME names them, not every interface: loopback,
    // the point-to-point links (Thunderbolt cables), and the first other
    // network (the LAN or Wi-Fi the hosts share).
    bool v4 = n.address.storage.ss_family == AF_INET;
    bool cable = n.prefixLength >= (v4 ? 30 : 126);
    if (!explicitFilter && !n.loopback && !cable) {
      if (haveLan) continue;
      haveLan = true;
    }
    nics.push_back(n);
  }
  // Other hosts' way in first (IPv4 before IPv6), loopback last.
  std::stable_sort(nics.begin(), nics.end(), [](const auto& a, const auto& b) {
    auto rank = [](const platform::NetInterface& n) {
      return (n.loopback ? 2 : 0) +
             (n.address.storage.ss_family == AF_INET ? 0 : 1);
    };
    return rank(a) < rank(b);
  });
  std::vector<platform::SocketAddress> out;
  for (const auto& n : nics)
    if (out.size() < kMaxAddresses) out.push_back(n.address);
  if (out.empty())
    throw error(mclInvalidArgument,
                "MCL_SOCKET_IFNAME='%s' leaves no interface for the "
                "rendezvous",
                paramValue("MCL_SOCKET_IFNAME").text.c_str());
  return out;
}

}  // namespace mcl
