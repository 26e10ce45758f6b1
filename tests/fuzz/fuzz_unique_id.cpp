// The unique id as users pass it between processes (unique_id.h): its
// string form "mcl1:<address>:<port>[,...]:<32 hex digits>" (what
// mclUniqueIdFromString and MCL_UNIQUE_ID read) and its 128 bytes (what
// mclCommInitRank reads). The input is tried as both: the whole of it as
// the string, its first 128 bytes (zero-padded) as the binary id. Defects
// must be mclInvalidArgument; what is accepted must come back the same
// through the other form, and its string must fit the documented buffer.
#include <mcl/mcl.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/bootstrap/unique_id.h"
#include "fuzz_check.h"

namespace {

using mcl::UniqueIdContents;
using mcl::fuzz::acceptedOr;
using mcl::fuzz::check;
using mcl::platform::SocketAddress;

bool sameAddress(const SocketAddress& a, const SocketAddress& b) {
  return a.storage.ss_family == b.storage.ss_family && a.length == b.length &&
         a.host() == b.host() && a.port() == b.port();
}

// The same root, secret and the first `roots` further roots.
bool sameContents(const UniqueIdContents& a, const UniqueIdContents& b,
                  size_t roots) {
  if (!sameAddress(a.root, b.root) || a.secret != b.secret) return false;
  if (a.moreRoots.size() < roots || b.moreRoots.size() < roots) return false;
  for (size_t i = 0; i < roots; ++i)
    if (!sameAddress(a.moreRoots[i], b.moreRoots[i])) return false;
  return true;
}

bool sameContents(const UniqueIdContents& a, const UniqueIdContents& b) {
  return a.moreRoots.size() == b.moreRoots.size() &&
         sameContents(a, b, a.moreRoots.size());
}

void fromText(const std::string& text) {
  UniqueIdContents c;
  if (!acceptedOr(mclInvalidArgument,
                  [&] { c = mcl::uniqueIdFromString(text); }))
    return;
  check(sameContents(mcl::uniqueIdFromString(mcl::uniqueIdToString(c)), c),
        "string -> contents -> string round trip");
  // The binary form keeps as many further roots as fit in 128 bytes.
  UniqueIdContents binary = mcl::decodeUniqueId(mcl::encodeUniqueId(c));
  check(sameContents(binary, c, binary.moreRoots.size()),
        "string -> binary keeps the root, the secret and the roots that fit");
}

void fromBytes(const uint8_t* data, size_t size) {
  mclUniqueId id;
  memset(&id, 0, sizeof(id));
  memcpy(id.internal, data, std::min(size, sizeof(id.internal)));
  UniqueIdContents c;
  if (!acceptedOr(mclInvalidArgument, [&] { c = mcl::decodeUniqueId(id); }))
    return;
  check(sameContents(mcl::decodeUniqueId(mcl::encodeUniqueId(c)), c),
        "binary -> contents -> binary round trip");
  std::string text = mcl::uniqueIdToString(c);
  check(text.size() + 1 <= MCL_UNIQUE_ID_STRING_BYTES,
        "the string fits MCL_UNIQUE_ID_STRING_BYTES");
  check(sameContents(mcl::uniqueIdFromString(text), c),
        "binary -> string -> binary round trip");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fromText(std::string(reinterpret_cast<const char*>(data), size));
  fromBytes(data, size);
  return 0;
}
