// A fresh unique id: a random secret and a rendezvous root started in this
// process on the addresses peers can reach (mclGetUniqueId, and the leader
// of each group in mclCommSplit).
#pragma once

#include <mcl/mcl.h>

namespace mcl {

mclUniqueId newUniqueId();

}  // namespace mcl
