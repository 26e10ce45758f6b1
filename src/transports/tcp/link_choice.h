// Which links carry TCP traffic between two hosts, decided from both hosts'
// advertised interfaces alone, so both sides reach the same answer:
//  1. every Thunderbolt-style cable: a point-to-point subnet (IPv4 /30 or
//     narrower, IPv6 /126 or narrower) that both hosts have an address in.
//     Two cables between a pair are two links, used together;
//  2. failing that, one shared subnet (a LAN: Ethernet, Wi-Fi);
//  3. failing that, one routed path between the first addresses.
// Loopback only joins ranks of the same host.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "platform/socket.h"

namespace mcl::transport::tcp {

struct Endpoint {
  std::string interfaceName;
  platform::SocketAddress address;  // with the rank's listening port
  int prefixLength = 0;
  bool loopback = false;
  bool allowed = true;  // passes MCL_SOCKET_IFNAME
};

enum class LinkKind { Cable, Lan, Routed, Loopback };
const char* linkKindName(LinkKind kind);

struct Link {
  LinkKind kind = LinkKind::Routed;
  Endpoint local;
  Endpoint remote;
};
// "cable tb1c1 10.77.1.1 -> tb0c1 10.77.1.2": its kind, then each end's
// interface and address.
std::string linkLabel(const Link& link);

// Links from `mine` to `peer`, most preferred kind only, in an order both
// sides agree on (by the lower address of each pair).
std::vector<Link> chooseLinks(const std::vector<Endpoint>& mine,
                              const std::vector<Endpoint>& peer, bool sameHost);

// True when the hosts share a cable that the chosen links do not use (the
// filter excluded it): worth a warning, it costs most of the bandwidth.
bool cableLeftUnused(const std::vector<Endpoint>& mine,
                     const std::vector<Endpoint>& peer,
                     const std::vector<Link>& chosen);

// The endpoints on the named interfaces; all of them when names is empty.
std::vector<Endpoint> onlyInterfaces(const std::vector<Endpoint>& endpoints,
                                     const std::set<std::string>& names);

// The endpoints on none of the interfaces that links use at this end
// (local) or at the peer's: what is left to reach the peer without them.
std::vector<Endpoint> withoutInterfaces(const std::vector<Endpoint>& endpoints,
                                        const std::vector<Link>& links,
                                        bool local);

// Wire form for the bootstrap all-gather.
std::vector<uint8_t> encodeEndpoints(const std::vector<Endpoint>& endpoints);
std::vector<Endpoint> decodeEndpoints(const std::vector<uint8_t>& bytes);

}  // namespace mcl::transport::tcp
