#include "core/bootstrap/unique_id.h"

#include <netinet/in.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.h"

namespace mcl {

namespace {

// Layout (all multi-byte values big-endian):
//   0  magic "MCLI"   4  format version (1)   5  family (4 or 6)
//   6  port (2)       8  address (16)        24  secret (16)
//   40 number of further root addresses, then each: family (1), port (2),
//      address (4 or 16); zero to the end
constexpr uint8_t kMagic[4] = {'M', 'C', 'L', 'I'};
constexpr uint8_t kFormat = 1;
constexpr const char* kStringPrefix = "mcl1:";
constexpr size_t kMoreRootsOffset = 40;

platform::SocketAddress addressFrom(int family, int port, const uint8_t* raw) {
  platform::SocketAddress a;
  if (family == 4) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&a.storage);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    memcpy(&v4->sin_addr, raw, 4);
    a.length = sizeof(sockaddr_in);
  } else {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.storage);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    memcpy(&v6->sin6_addr, raw, 16);
    a.length = sizeof(sockaddr_in6);
  }
  return a;
}

}  // namespace

mclUniqueId encodeUniqueId(const UniqueIdContents& c) {
  mclUniqueId id;
  memset(&id, 0, sizeof(id));
  auto* b = reinterpret_cast<uint8_t*>(id.internal);
  memcpy(b, kMagic, 4);
  b[4] = kFormat;
  int port = c.root.port();
  b[6] = static_cast<uint8_t>(port >> 8);
  b[7] = static_cast<uint8_t>(port & 0xff);
  if (c.root.storage.ss_family == AF_INET6) {
    b[5] = 6;
    memcpy(b + 8,
           &reinterpret_cast<const sockaddr_in6*>(&c.root.storage)->sin6_addr,
           16);
  } else {
    b[5] = 4;
    memcpy(b + 8,
           &reinterpret_cast<const sockaddr_in*>(&c.root.storage)->sin_addr, 4);
  }
  memcpy(b + 24, c.secret.data(), c.secret.size());
  size_t at = kMoreRootsOffset + 1;
  uint8_t count = 0;
  for (const auto& r : c.moreRoots) {
    bool v6 = r.storage.ss_family == AF_INET6;
    size_t need = 3 + (v6 ? 16 : 4);
    if (at + need > sizeof(id.internal)) break;  // as many as fit
    b[at] = v6 ? 6 : 4;
    b[at + 1] = static_cast<uint8_t>(r.port() >> 8);
    b[at + 2] = static_cast<uint8_t>(r.port() & 0xff);
    if (v6)
      memcpy(b + at + 3,
             &reinterpret_cast<const sockaddr_in6*>(&r.storage)->sin6_addr, 16);
    else
      memcpy(b + at + 3,
             &reinterpret_cast<const sockaddr_in*>(&r.storage)->sin_addr, 4);
    at += need;
    ++count;
  }
  b[kMoreRootsOffset] = count;
  return id;
}

UniqueIdContents decodeUniqueId(const mclUniqueId& id) {
  const auto* b = reinterpret_cast<const uint8_t*>(id.internal);
  if (memcmp(b, kMagic, 4) != 0 || b[4] != kFormat || (b[5] != 4 && b[5] != 6))
    throw error(mclInvalidArgument,
                "commId is not a unique id from mclGetUniqueId (pass the same "
                "id, intact, to every rank)");
  UniqueIdContents c;
  int port = (b[6] << 8) | b[7];
  // Nothing listens on port 0; the string form refuses it too.
  if (port == 0)
    throw error(mclInvalidArgument,
                "commId is not a unique id from mclGetUniqueId (its root "
                "port is 0)");
  if (b[5] == 4) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&c.root.storage);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    memcpy(&v4->sin_addr, b + 8, 4);
    c.root.length = sizeof(sockaddr_in);
  } else {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&c.root.storage);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    memcpy(&v6->sin6_addr, b + 8, 16);
    c.root.length = sizeof(sockaddr_in6);
  }
  memcpy(c.secret.data(), b + 24, c.secret.size());
  size_t at = kMoreRootsOffset + 1;
  for (int i = 0; i < b[kMoreRootsOffset]; ++i) {
    int family = at < sizeof(id.internal) ? b[at] : 0;
    size_t need = 3 + (family == 6 ? 16 : 4);
    if ((family != 4 && family != 6) || at + need > sizeof(id.internal) ||
        (b[at + 1] | b[at + 2]) == 0)
      throw error(mclInvalidArgument,
                  "commId is not a unique id from mclGetUniqueId (its "
                  "address list is damaged)");
    c.moreRoots.push_back(
        addressFrom(family, (b[at + 1] << 8) | b[at + 2], b + at + 3));
    at += need;
  }
  return c;
}

std::vector<platform::SocketAddress> UniqueIdContents::allRoots() const {
  std::vector<platform::SocketAddress> all{root};
  all.insert(all.end(), moreRoots.begin(), moreRoots.end());
  return all;
}

std::string uniqueIdToString(const UniqueIdContents& c) {
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (uint8_t byte : c.secret) {
    hex += kHex[byte >> 4];
    hex += kHex[byte & 15];
  }
  std::string text = kStringPrefix + c.root.toString();
  for (const auto& r : c.moreRoots) text += "," + r.toString();
  return text + ":" + hex;
}

UniqueIdContents uniqueIdFromString(const std::string& text) {
  auto bad = [&](const char* what) {
    return error(mclInvalidArgument,
                 "unique id string is malformed (%s); expected "
                 "mcl1:<address>:<port>[,<address>:<port>...]:<32 hex "
                 "digits>",
                 what);
  };
  if (text.rfind(kStringPrefix, 0) != 0) throw bad("missing 'mcl1:' prefix");
  std::string rest = text.substr(strlen(kStringPrefix));
  size_t lastColon = rest.rfind(':');
  if (lastColon == std::string::npos) throw bad("no secret");
  std::string hex = rest.substr(lastColon + 1);
  std::string list = rest.substr(0, lastColon);
  UniqueIdContents c;
  size_t from = 0;
  bool first = true;
  while (from <= list.size()) {
    size_t comma = list.find(',', from);
    if (comma == std::string::npos) comma = list.size();
    std::string hostPort = list.substr(from, comma - from);
    from = comma + 1;
    size_t portColon = hostPort.rfind(':');
    if (portColon == std::string::npos) throw bad("no port");
    std::string host = hostPort.substr(0, portColon);
    std::string portText = hostPort.substr(portColon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
    if (portText.empty() ||
        portText.find_first_not_of("0123456789") != std::string::npos)
      throw bad("port is not a number");
    if (portText.size() > 5) throw bad("port out of range");
    int port = std::stoi(portText);
    if (port < 1 || port > 65535) throw bad("port out of range");
    platform::SocketAddress address;
    try {
      address = platform::SocketAddress::fromNumeric(host, port);
    } catch (const std::invalid_argument&) {
      throw bad("address is not a numeric IPv4 or IPv6 address");
    }
    if (first) {
      c.root = address;
      first = false;
    } else {
      c.moreRoots.push_back(address);
    }
  }
  if (hex.size() != 2 * c.secret.size())
    throw bad("secret is not 32 hex digits");
  for (size_t i = 0; i < c.secret.size(); ++i) {
    auto nibble = [&](char ch) -> int {
      if (ch >= '0' && ch <= '9') return ch - '0';
      if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
      if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
      throw bad("secret has a non-hex digit");
    };
    c.secret[i] =
        static_cast<uint8_t>(nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
  }
  return c;
}

}  // namespace mcl
