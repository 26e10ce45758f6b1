// The rendezvous roots of this process, kept outside any one root: their
// listening sockets, closed in a child forked after mclGetUniqueId (its copy
// would accept connections nobody serves), and which roots have finished, so
// that a rank in a root's own process waits for it before init returns.
#pragma once

#include <cstdint>

namespace mcl::rendezvous {

void registerRootFd(int fd);
void unregisterRootFd(int fd);
// The root that issued commId is running (false) or done (true).
void setRootState(uint64_t commId, bool finished);

}  // namespace mcl::rendezvous
