// The rendezvous root: a thread started by mclGetUniqueId that admits the
// ranks that prove the secret, checks they agree (nranks, distinct ranks),
// hands each the table of everyone, relays the all-gathers of init, and exits
// once every rank said Bye, init failed, or the timeout passed.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "base/auth.h"
#include "platform/socket.h"

namespace mcl {

// Listens on each address of `binds` (each bound on its own; one port for
// all when it can) and starts the root thread; returns the addresses the
// ranks may connect to (those that could be bound), in the same order.
// whenClosed, if any, runs on the root's thread once it is done (every rank
// joined and left, or init failed).
std::vector<platform::SocketAddress> startRendezvousRoot(
    const Secret& secret, const std::vector<platform::SocketAddress>& binds,
    int timeoutSeconds, std::function<void()> whenClosed = {});

// When this process runs the root that issued commId, waits (until
// `deadline`) for it to finish: every rank has then had the last message of
// init. Returns at once when the root runs in another process.
void waitForRendezvousRoot(uint64_t commId, platform::Deadline deadline);

}  // namespace mcl
