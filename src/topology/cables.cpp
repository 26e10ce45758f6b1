#include "topology/cables.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/error.h"

namespace mcl::topology {

namespace {

struct PortRef {
  int host;
  size_t port;
};

bool seesDirectly(const ThunderboltPort& port, const std::string& uuid) {
  return std::any_of(
      port.peers.begin(), port.peers.end(),
      [&](const ThunderboltPeer& p) { return p.direct() && p.uuid == uuid; });
}

CableEnd endOf(const std::vector<HostThunderbolt>& hosts, PortRef ref) {
  const HostThunderbolt& host = hosts[ref.host];
  const ThunderboltPort& port = host.ports[ref.port];
  CableEnd end;
  end.host = ref.host;
  end.portUuid = port.uuid;
  end.receptacle = port.receptacle;
  if (auto it = host.devices.find(port.receptacle); it != host.devices.end()) {
    end.device = it->second;
  }
  return end;
}

}  // namespace

std::vector<Cable> findCables(const std::vector<HostThunderbolt>& hosts) {
  std::unordered_map<std::string, PortRef> byUuid;
  for (size_t h = 0; h < hosts.size(); ++h) {
    for (size_t p = 0; p < hosts[h].ports.size(); ++p) {
      const std::string& uuid = hosts[h].ports[p].uuid;
      auto [it, fresh] = byUuid.emplace(uuid, PortRef{static_cast<int>(h), p});
      if (!fresh) {
        throw error(mclInvalidArgument,
                    "Thunderbolt port UUID %s is reported by host %d and host "
                    "%zu; cables cannot be matched",
                    uuid.c_str(), it->second.host, h);
      }
    }
  }

  std::vector<Cable> cables;
  for (size_t h = 0; h < hosts.size(); ++h) {
    for (size_t p = 0; p < hosts[h].ports.size(); ++p) {
      const ThunderboltPort& mine = hosts[h].ports[p];
      for (const ThunderboltPeer& peer : mine.peers) {
        if (!peer.direct() || peer.uuid.empty()) continue;
        auto it = byUuid.find(peer.uuid);
        if (it == byUuid.end()) continue;  // a Mac outside this job
        PortRef other = it->second;
        // Each cable is seen from both ends; keep it once, from the lower
        // host. A cable from a Mac to itself links no two ranks.
        if (other.host <= static_cast<int>(h)) continue;
        if (!seesDirectly(hosts[other.host].ports[other.port], mine.uuid)) {
          continue;  // one-sided: stale or half-plugged, not a usable cable
        }
        cables.push_back(Cable{endOf(hosts, PortRef{static_cast<int>(h), p}),
                               endOf(hosts, other)});
      }
    }
  }
  std::sort(cables.begin(), cables.end(), [](const Cable& x, const Cable& y) {
    return std::tie(x.a.host, x.b.host, x.a.receptacle, x.b.receptacle) <
           std::tie(y.a.host, y.b.host, y.a.receptacle, y.b.receptacle);
  });
  return cables;
}

std::map<std::pair<int, int>, int> cablesPerPair(
    const std::vector<Cable>& cables) {
  std::map<std::pair<int, int>, int> counts;
  for (const Cable& c : cables) {
    ++counts[{std::min(c.a.host, c.b.host), std::max(c.a.host, c.b.host)}];
  }
  return counts;
}

}  // namespace mcl::topology
