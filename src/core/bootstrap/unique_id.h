// What a unique id holds (the root's address and port and the secret), its
// 128-byte binary layout and its string form "mcl1:<addr>:<port>:<hex>".
#pragma once

#include <mcl/mcl.h>

#include <string>
#include <vector>

#include "base/auth.h"
#include "platform/socket.h"

namespace mcl {

struct UniqueIdContents {
  platform::SocketAddress root;  // the first address the root listens on
  // Further addresses of the root (its other interfaces), tried together
  // with the first: in a cluster cabled point to point, each host reaches
  // the root through a different cable.
  std::vector<platform::SocketAddress> moreRoots;
  Secret secret{};

  std::vector<platform::SocketAddress> allRoots() const;
};

mclUniqueId encodeUniqueId(const UniqueIdContents& contents);
// Throws mclInvalidArgument when the bytes are not an mcl unique id.
UniqueIdContents decodeUniqueId(const mclUniqueId& id);

std::string uniqueIdToString(const UniqueIdContents& contents);
// Throws mclInvalidArgument, saying which part is malformed.
UniqueIdContents uniqueIdFromString(const std::string& text);

}  // namespace mcl
