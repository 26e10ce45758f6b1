// Where the rendezvous root listens: every address of this host that
// MCL_SOCKET_IFNAME allows, each bound on its own (never the wildcard), the
// ones other hosts can reach first and loopback last. The unique id carries
// them all, so each rank finds the root through whichever cable or network
// reaches it.
#pragma once

#include <vector>

#include "platform/socket.h"

namespace mcl {

std::vector<platform::SocketAddress> rendezvousAddresses();

}  // namespace mcl
