#include "platform/link_state.h"

#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <string>

#if defined(__linux__)
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#elif defined(__APPLE__)
#include <sys/ioctl.h>

#include <cstring>
#if __has_include(<net/if_media.h>)
#include <net/if_media.h>
#else
// The SDK that CI's macOS compile check uses lacks this header (its
// <net/if.h> has struct ifmediareq): the bits of Apple's public one.
#define IFM_AVALID 0x00000001
#define IFM_ACTIVE 0x00000002
#endif
#if !defined(SIOCGIFMEDIA)
#define SIOCGIFMEDIA _IOWR('i', 56, struct ifmediareq)
#endif
#endif

#include "platform/system_error.h"

namespace mcl::platform {

#if defined(__APPLE__)
// macOS keeps IFF_RUNNING on an Ethernet or Thunderbolt interface whose
// cable is out ("status: inactive"): the media status says it.
void readCarriers(std::map<std::string, InterfaceLink>& links) {
  const int s = socket(AF_INET, SOCK_DGRAM, 0);
  if (s < 0) return;
  for (auto& [name, link] : links) {
    ifmediareq request{};
    strlcpy(request.ifm_name, name.c_str(), sizeof(request.ifm_name));
    if (ioctl(s, SIOCGIFMEDIA, &request) == 0 &&
        (request.ifm_status & IFM_AVALID) != 0)
      link.running = link.running && (request.ifm_status & IFM_ACTIVE) != 0;
  }
  close(s);
}
#endif

std::map<std::string, InterfaceLink> readInterfaceLinks() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) throwSystemError("getifaddrs");
  std::map<std::string, InterfaceLink> out;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    InterfaceLink& link = out[i->ifa_name];
    link.up = (i->ifa_flags & IFF_UP) != 0;
    link.running = (i->ifa_flags & IFF_RUNNING) != 0;
    if (i->ifa_addr == nullptr) continue;
    const int family = i->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    char host[NI_MAXHOST];
    const socklen_t length =
        family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    if (getnameinfo(i->ifa_addr, length, host, sizeof(host), nullptr, 0,
                    NI_NUMERICHOST) == 0)
      link.addresses.insert(host);
  }
  freeifaddrs(list);
#if defined(__APPLE__)
  readCarriers(out);
#endif
  return out;
}

LinkEvents::LinkEvents() {
#if defined(__linux__)
  fd_ = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
               NETLINK_ROUTE);
  if (fd_ < 0) return;
  sockaddr_nl where{};
  where.nl_family = AF_NETLINK;
  where.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
  if (bind(fd_, reinterpret_cast<sockaddr*>(&where), sizeof(where)) != 0) {
    close(fd_);
    fd_ = -1;
  }
#else
  // Every routing message, RTM_IFINFO (a link's flags) among them.
  fd_ = socket(PF_ROUTE, SOCK_RAW, AF_UNSPEC);
  if (fd_ < 0) return;
  fcntl(fd_, F_SETFD, FD_CLOEXEC);
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
#endif
}

LinkEvents::~LinkEvents() {
  if (fd_ >= 0) close(fd_);
}

bool LinkEvents::drain() {
  if (fd_ < 0) return false;
  bool any = false;
  char buffer[8192];
  for (;;) {
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n > 0) {
      any = true;
      continue;
    }
    // ENOBUFS: notices were lost, which is a change too.
    if (n < 0 && errno == ENOBUFS) {
      any = true;
      continue;
    }
    return any;
  }
}

}  // namespace mcl::platform
