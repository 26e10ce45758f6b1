// Subnets written as text ("10.77.3.0/30"), from an address and a prefix
// length, for matching the two ends of a cable by the subnet they share.
#pragma once

#include <string>

namespace mcl::topology {

// "10.77.3.1", 30 -> "10.77.3.0/30"; "" when the address is not numeric
// IPv4/IPv6 or the prefix is out of range.
std::string subnetOf(const std::string& address, int prefixLength);

// A subnet just big enough for two hosts: IPv4 /30 or narrower, IPv6 /126
// or narrower (how each Thunderbolt cable gets its own subnet).
bool isPointToPointPrefix(const std::string& address, int prefixLength);

// 169.254/16 or fe80::/10: every Thunderbolt port of every Mac may have one,
// so sharing such a subnet says nothing about who is cabled to whom.
bool isLinkLocal(const std::string& address);

// The address at the other end of a point-to-point subnet: in a /30 (/126)
// .1 and .2 (::1 and ::2) face each other, in a /31 (/127) the two
// addresses; "" when the prefix is not point-to-point or the address is
// not numeric.
std::string pointToPointPeer(const std::string& address, int prefixLength);

}  // namespace mcl::topology
