#include "platform/interfaces.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "platform/system_error.h"

namespace mcl::platform {

namespace {

// The mask's own family may be 0 on BSD and macOS: go by the address's.
int prefixOf(const sockaddr* mask, int family) {
  if (mask == nullptr) return 0;
  const uint8_t* bytes = nullptr;
  size_t length = 0;
  if (family == AF_INET) {
    bytes = reinterpret_cast<const uint8_t*>(
        &reinterpret_cast<const sockaddr_in*>(mask)->sin_addr);
    length = 4;
  } else if (family == AF_INET6) {
    bytes = reinterpret_cast<const uint8_t*>(
        &reinterpret_cast<const sockaddr_in6*>(mask)->sin6_addr);
    length = 16;
  }
  int bits = 0;
  for (size_t i = 0; i < length; ++i) bits += __builtin_popcount(bytes[i]);
  return bits;
}

bool isLinkLocal6(const sockaddr_in6* a) {
  return a->sin6_addr.s6_addr[0] == 0xfe &&
         (a->sin6_addr.s6_addr[1] & 0xc0) == 0x80;
}

}  // namespace

std::vector<NetInterface> listInterfaces(bool evenDown) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) throwSystemError("getifaddrs");
  std::vector<NetInterface> out;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || (!evenDown && (i->ifa_flags & IFF_UP) == 0))
      continue;
    int family = i->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    if (family == AF_INET6 &&
        isLinkLocal6(reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)))
      continue;
    NetInterface n;
    n.name = i->ifa_name;
    size_t len = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    memcpy(&n.address.storage, i->ifa_addr, len);
    n.address.length = static_cast<socklen_t>(len);
    n.prefixLength = prefixOf(i->ifa_netmask, family);
    n.loopback = (i->ifa_flags & IFF_LOOPBACK) != 0;
    n.pointToPoint = (i->ifa_flags & IFF_POINTOPOINT) != 0;
    n.up = (i->ifa_flags & IFF_UP) != 0;
    out.push_back(n);
  }
  freeifaddrs(list);
  return out;
}

bool sameSubnet(const SocketAddress& a, const SocketAddress& b,
                int prefixLength) {
  if (a.storage.ss_family != b.storage.ss_family) return false;
  const uint8_t* pa;
  const uint8_t* pb;
  int maxBits;
  if (a.storage.ss_family == AF_INET) {
    pa = reinterpret_cast<const uint8_t*>(
        &reinterpret_cast<const sockaddr_in*>(&a.storage)->sin_addr);
    pb = reinterpret_cast<const uint8_t*>(
        &reinterpret_cast<const sockaddr_in*>(&b.storage)->sin_addr);
    maxBits = 32;
  } else if (a.storage.ss_family == AF_INET6) {
    pa = reinterpret_cast<const sockaddr_in6*>(&a.storage)->sin6_addr.s6_addr;
    pb = reinterpret_cast<const sockaddr_in6*>(&b.storage)->sin6_addr.s6_addr;
    maxBits = 128;
  } else {
    return false;
  }
  if (prefixLength < 0 || prefixLength > maxBits) return false;
  int full = prefixLength / 8;
  if (memcmp(pa, pb, static_cast<size_t>(full)) != 0) return false;
  int rest = prefixLength % 8;
  if (rest == 0) return true;
  auto mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (pa[full] & mask) == (pb[full] & mask);
}

}  // namespace mcl::platform
