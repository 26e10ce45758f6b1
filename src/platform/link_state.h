// Whether a network interface can carry traffic now, and a socket the OS
// writes to when that may have changed: rtnetlink's link and address groups
// on Linux, the routing socket on macOS. A cable pulled out of its port
// turns its interface's carrier off (IFF_RUNNING clear) at once, long
// before any TCP timer notices.
#pragma once

#include <map>
#include <set>
#include <string>

namespace mcl::platform {

struct InterfaceLink {
  bool up = false;                  // IFF_UP: configured up
  bool running = false;             // IFF_RUNNING: up with a carrier
  std::set<std::string> addresses;  // numeric, without a prefix
  bool usable() const { return up && running; }
};

// Every interface of the host by name (getifaddrs). Throws SystemError.
std::map<std::string, InterfaceLink> readInterfaceLinks();

// The OS's notices of link and address changes, non-blocking. A host
// where it cannot be opened has fd() -1: read the states on a timer.
class LinkEvents {
 public:
  LinkEvents();
  ~LinkEvents();
  LinkEvents(const LinkEvents&) = delete;
  LinkEvents& operator=(const LinkEvents&) = delete;

  int fd() const { return fd_; }
  // Reads every notice waiting; true if there was one (what changed is
  // read from readInterfaceLinks(), which is never out of date).
  bool drain();

 private:
  int fd_ = -1;
};

}  // namespace mcl::platform
