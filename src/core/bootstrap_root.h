// The rendezvous root: a thread started by mclGetUniqueId that admits the
// ranks that prove the secret, checks they agree (nranks, distinct ranks),
// hands each the table of everyone, relays the all-gathers of init, and exits
// once every rank said Bye, init failed, or the timeout passed.
#pragma once

#include "base/auth.h"
#include "platform/socket.h"

namespace mcl {

// Binds `bind` (port 0 picks one) and starts the root thread; returns the
// address the ranks should connect to.
platform::SocketAddress startRendezvousRoot(const Secret& secret,
                                            const platform::SocketAddress& bind,
                                            int timeoutSeconds);

}  // namespace mcl
