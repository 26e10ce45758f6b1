#include "core/new_unique_id.h"

#include "base/auth.h"
#include "core/bootstrap_root.h"
#include "core/rendezvous_addresses.h"
#include "core/settings.h"
#include "core/unique_id.h"

namespace mcl {

mclUniqueId newUniqueId() {
  UniqueIdContents contents;
  contents.secret = randomSecret();
  auto bound = startRendezvousRoot(contents.secret, rendezvousAddresses(),
                                   timeoutFromEnvironment());
  contents.root = bound.front();
  contents.moreRoots.assign(bound.begin() + 1, bound.end());
  return encodeUniqueId(contents);
}

}  // namespace mcl
