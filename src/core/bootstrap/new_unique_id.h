// A fresh unique id: a random secret and a rendezvous root started in this
// process on the addresses peers can reach (mclGetUniqueId, and the leader
// of each group in mclCommSplit).
#pragma once

#include <mcl/mcl.h>

#include "base/auth.h"

namespace mcl {

mclUniqueId newUniqueId();
// With a secret the members already share (a split's, derived from its
// parent's).
mclUniqueId newUniqueId(const Secret& secret);

}  // namespace mcl
