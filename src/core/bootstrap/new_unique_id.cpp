#include "core/bootstrap/new_unique_id.h"

#include "base/auth.h"
#include "core/bootstrap/bootstrap_root.h"
#include "core/bootstrap/rendezvous_addresses.h"
#include "core/bootstrap/unique_id.h"
#include "core/params/settings.h"

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
