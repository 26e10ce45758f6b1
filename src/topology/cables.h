// Finding the Thunderbolt cables between hosts from what each host says about
// its own ports. A cable is matched by identity — A's port sees B's port UUID
// and B's port sees A's — never by the order ports are listed, because two
// hosts list a doubled pair's cables in different orders (a known cause of
// deadlocks when ranks disagree on which wire is which).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "topology/thunderbolt_macos.h"

namespace mcl::topology {

// What one host reported: its ports, and optionally receptacle -> enX.
struct HostThunderbolt {
  std::vector<ThunderboltPort> ports;
  // From parseNetworksetupPorts; may be empty.
  std::map<int, std::string> devices;
};

struct CableEnd {
  int host = -1;         // index into the hosts given to findCables
  std::string portUuid;  // domain_uuid_key of the port
  int receptacle = 0;    // port number on that host
  std::string device;    // "en3"; empty when the host gave no map for it
};

struct Cable {
  CableEnd a;  // a.host < b.host
  CableEnd b;
};

// Every confirmed cable, sorted by (a.host, b.host, a.receptacle,
// b.receptacle) so all ranks see the same list. A doubled pair gives two
// cables. Peers seen by only one side, peers behind hubs and Macs outside
// `hosts` give none. Throws mcl::Error(mclInvalidArgument) when two ports
// (on one host or two) share a UUID: identity would then be meaningless.
std::vector<Cable> findCables(const std::vector<HostThunderbolt>& hosts);

// Cables per unordered host pair {i, j} with i < j.
std::map<std::pair<int, int>, int> cablesPerPair(
    const std::vector<Cable>& cables);

}  // namespace mcl::topology
