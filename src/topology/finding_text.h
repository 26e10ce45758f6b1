// How findings name things, one way everywhere: "host 1 (mac-b)",
// "host 1 (mac-b) en3", a cable as its two ends, and the fix commands for
// a host's OS (networksetup on a Mac, ip on Linux).
#pragma once

#include <string>

#include "topology/cluster.h"

namespace mcl::topology {

std::string hostLabel(const Cluster& c, int host);
std::string interfaceLabel(const Cluster& c, int host,
                           const std::string& interface);
std::string endLabel(const Cluster& c, const LinkEnd& e);
// An end without its host: "en2", else "Thunderbolt 3", else its address.
std::string endName(const LinkEnd& e);
std::string cableLabel(const Cluster& c, const ClusterLink& l);

// The host's inventory says it is a Mac (its Thunderbolt tools ran, or it
// has Thunderbolt Bridge).
bool looksLikeMac(const ClusterHost& h);

// The command that gives `interface` the address `address`/`prefix` on
// that host: networksetup for a Mac's Thunderbolt port, ifconfig for its
// other ports, ip on Linux.
std::string setAddressCommand(const ClusterHost& h, const InterfaceEntry& e,
                              const std::string& address, int prefix);

}  // namespace mcl::topology
