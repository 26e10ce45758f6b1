#include "core/unique_id.h"

#include <netinet/in.h>

#include <cstring>

#include "base/error.h"

namespace mcl {

namespace {

// Layout (all multi-byte values big-endian):
//   0  magic "MCLI"   4  format version (1)   5  family (4 or 6)
//   6  port (2)       8  address (16)        24  secret (16)
//   40..127 zero
constexpr uint8_t kMagic[4] = {'M', 'C', 'L', 'I'};
constexpr uint8_t kFormat = 1;
constexpr const char* kStringPrefix = "mcl1:";

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
  return c;
}

std::string uniqueIdToString(const UniqueIdContents& c) {
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (uint8_t byte : c.secret) {
    hex += kHex[byte >> 4];
    hex += kHex[byte & 15];
  }
  return kStringPrefix + c.root.toString() + ":" + hex;
}

UniqueIdContents uniqueIdFromString(const std::string& text) {
  auto bad = [&](const char* what) {
    return error(mclInvalidArgument,
                 "unique id string is malformed (%s); expected "
                 "mcl1:<address>:<port>:<32 hex digits>",
                 what);
  };
  if (text.rfind(kStringPrefix, 0) != 0) throw bad("missing 'mcl1:' prefix");
  std::string rest = text.substr(strlen(kStringPrefix));
  size_t lastColon = rest.rfind(':');
  if (lastColon == std::string::npos) throw bad("no secret");
  std::string hex = rest.substr(lastColon + 1);
  std::string hostPort = rest.substr(0, lastColon);
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
  UniqueIdContents c;
  try {
    c.root = platform::SocketAddress::fromNumeric(host, port);
  } catch (const std::invalid_argument&) {
    throw bad("address is not a numeric IPv4 or IPv6 address");
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
