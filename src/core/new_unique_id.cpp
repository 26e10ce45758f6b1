#include "core/new_unique_id.h"

#include "base/auth.h"
#include "core/bootstrap_root.h"
#include "core/rendezvous_addresses.h"
#include "core/settings.h"
#include "core/unique_id.h"

namespace mcl {

mclUniqueId newUniqueId() { return newUniqueId(randomSecret()); }

mclUniqueId newUniqueId(const Secret& secret) {
  UniqueIdContents contents;
  contents.secret = secret;
  auto bound = startRendezvousRoot(contents.secret, rendezvousAddresses(),
                                   timeoutFromEnvironment());
  contents.root = bound.front();
  contents.moreRoots.assign(bound.begin() + 1, bound.end());
  return encodeUniqueId(contents);
}

}  // namespace mcl
