#include "core/bootstrap/bootstrap_root.h"

#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <sys/socket.h>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include <cerrno>
#include <memory>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "base/port_range.h"
#include "base/stranger_policy.h"
#include "core/bootstrap/rendezvous_root.h"
#include "core/bootstrap/root_registry.h"
#include "core/params/params.h"

namespace mcl {

std::vector<platform::SocketAddress> startRendezvousRoot(
    const Secret& secret, const std::vector<platform::SocketAddress>& binds,
    int timeoutSeconds, std::function<void()> whenClosed) {
  std::vector<platform::Socket> listeners;
  std::vector<platform::SocketAddress> bound;
  std::string failures;  // why each address could not be listened on
  const platform::PortRange range = portRangeSetting(environmentParams());
  int port = 0;
  for (auto address : binds) {
    // One port for every address when it is free: easier to read and to
    // open in a firewall.
    auto withPort = [&](int p) {
      platform::SocketAddress a = address;
      if (a.storage.ss_family == AF_INET)
        reinterpret_cast<sockaddr_in*>(&a.storage)->sin_port =
            htons(static_cast<uint16_t>(p));
      else
        reinterpret_cast<sockaddr_in6*>(&a.storage)->sin6_port =
            htons(static_cast<uint16_t>(p));
      return a;
    };
    platform::Socket s;
    // A given port is a promise to the ranks (MCL_ROOT): that one or none.
    // Else the first address's port for every address when it is free,
    // else any (within MCL_PORT_RANGE).
    std::vector<int> ports = {port, 0};
    if (port == 0) ports = {0};
    if (address.port() != 0) ports = {address.port()};
    for (int p : ports) {
      try {
        s = p != 0 || address.port() != 0
                ? platform::listenTcp(withPort(p),
                                      stranger_policy::kListenBacklog)
                : platform::listenTcpInRange(
                      address, stranger_policy::kListenBacklog, range);
        break;
      } catch (const std::system_error& e) {
        if (p != ports.back()) continue;
        std::string why = e.what();
        if (e.code().value() == EADDRINUSE && address.port() != 0)
          why +=
              "; the port is MCL_ROOT's: another job with the same "
              "MCL_ROOT, or a leftover process of an earlier one, holds "
              "it (or pick another port)";
        MCL_LOG(Warn, kLogBootstrap, "rendezvous: cannot listen on %s: %s",
                address.host().c_str(), why.c_str());
        failures += (failures.empty() ? "" : "; ") + why;
      }
    }
    if (!s.valid()) continue;
    platform::SocketAddress local = platform::localAddress(s.fd());
    if (port == 0) port = local.port();
    rendezvous::registerRootFd(s.fd());
    MCL_LOG(Info, kLogBootstrap, "rendezvous root listening on %s",
            local.toString().c_str());
    bound.push_back(local);
    listeners.push_back(std::move(s));
  }
  if (listeners.empty() && failures.empty())
    throw error(mclSystemError,
                "mclGetUniqueId: the rendezvous has no address to listen on "
                "(check MCL_SOCKET_IFNAME)");
  if (listeners.empty())
    throw error(mclSystemError,
                "mclGetUniqueId: the rendezvous root cannot listen: %s",
                failures.c_str());
  auto root = std::make_shared<rendezvous::RendezvousRoot>(
      std::move(listeners), secret, timeoutSeconds, std::move(whenClosed));
  std::thread([root] { root->run(); }).detach();
  return bound;
}

}  // namespace mcl
