#include "topology/subnet.h"

#include <arpa/inet.h>

#include <cstring>
#include <string>

namespace mcl::topology {

namespace {

bool isIpv6(const std::string& address) {
  return address.find(':') != std::string::npos;
}

}  // namespace

std::string subnetOf(const std::string& address, int prefixLength) {
  unsigned char bytes[16] = {};
  bool v6 = isIpv6(address);
  int family = v6 ? AF_INET6 : AF_INET;
  int bits = v6 ? 128 : 32;
  if (prefixLength < 0 || prefixLength > bits) return "";
  if (inet_pton(family, address.c_str(), bytes) != 1) return "";
  for (int i = 0; i < bits / 8; ++i) {
    int keep = prefixLength - i * 8;
    if (keep >= 8) continue;
    bytes[i] &= keep <= 0 ? 0 : static_cast<unsigned char>(0xff << (8 - keep));
  }
  char text[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(family, bytes, text, sizeof(text)) == nullptr) return "";
  return std::string(text) + "/" + std::to_string(prefixLength);
}

bool isPointToPointPrefix(const std::string& address, int prefixLength) {
  return isIpv6(address) ? prefixLength >= 126 && prefixLength < 128
                         : prefixLength >= 30 && prefixLength < 32;
}

std::string pointToPointPeer(const std::string& address, int prefixLength) {
  if (!isPointToPointPrefix(address, prefixLength)) return "";
  const bool v6 = isIpv6(address);
  unsigned char bytes[16] = {};
  if (inet_pton(v6 ? AF_INET6 : AF_INET, address.c_str(), bytes) != 1)
    return "";
  unsigned char& last = bytes[v6 ? 15 : 3];
  const int hostBits = (v6 ? 128 : 32) - prefixLength;  // 1 or 2
  const int mask = (1 << hostBits) - 1;
  const int host = last & mask;
  int peer = 0;
  if (hostBits == 1)
    peer = host ^ 1;
  else
    peer = host == 1 ? 2 : 1;  // .0 and .3 are not hosts: suggest .1
  last = static_cast<unsigned char>((last & ~mask) | peer);
  char text[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(v6 ? AF_INET6 : AF_INET, bytes, text, sizeof(text)) == nullptr)
    return "";
  return text;
}

bool isLinkLocal(const std::string& address) {
  if (isIpv6(address)) {
    unsigned char b[16];
    return inet_pton(AF_INET6, address.c_str(), b) == 1 && b[0] == 0xfe &&
           (b[1] & 0xc0) == 0x80;
  }
  return address.rfind("169.254.", 0) == 0;
}

}  // namespace mcl::topology
