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

bool isLinkLocal(const std::string& address) {
  if (isIpv6(address)) {
    unsigned char b[16];
    return inet_pton(AF_INET6, address.c_str(), b) == 1 && b[0] == 0xfe &&
           (b[1] & 0xc0) == 0x80;
  }
  return address.rfind("169.254.", 0) == 0;
}

}  // namespace mcl::topology
