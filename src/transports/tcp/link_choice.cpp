#include "transports/tcp/link_choice.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/wire.h"
#include "platform/interfaces.h"

namespace mcl::transport::tcp {

namespace {

bool isCableSubnet(const Endpoint& e) {
  bool v4 = e.address.storage.ss_family == AF_INET;
  return e.prefixLength >= (v4 ? 30 : 126);
}

bool shareSubnet(const Endpoint& a, const Endpoint& b) {
  int prefix = std::min(a.prefixLength, b.prefixLength);
  return prefix > 0 && a.prefixLength == b.prefixLength &&
         platform::sameSubnet(a.address, b.address, prefix);
}

// Both sides sort pairs by the same key: the pair's two addresses, lower
// first.
std::string pairKey(const Link& l) {
  std::string a = l.local.address.toString();
  std::string b = l.remote.address.toString();
  return a < b ? a + "|" + b : b + "|" + a;
}

std::vector<Link> usablePairs(const std::vector<Endpoint>& mine,
                              const std::vector<Endpoint>& peer,
                              bool requireAllowed) {
  std::vector<Link> cables;
  std::vector<Link> lans;
  for (const auto& m : mine) {
    if (m.loopback || (requireAllowed && !m.allowed)) continue;
    for (const auto& p : peer) {
      if (p.loopback || (requireAllowed && !p.allowed)) continue;
      // The same address on both sides is one host talking to itself.
      if (!shareSubnet(m, p) || m.address.host() == p.address.host()) continue;
      Link l{isCableSubnet(m) ? LinkKind::Cable : LinkKind::Lan, m, p};
      (l.kind == LinkKind::Cable ? cables : lans).push_back(l);
    }
  }
  auto byKey = [](const Link& a, const Link& b) {
    return pairKey(a) < pairKey(b);
  };
  // A cable with both an IPv4 and an IPv6 subnet is one wire, not two:
  // keep one family.
  auto oneFamily = [](std::vector<Link>& links) {
    bool anyV4 = std::any_of(links.begin(), links.end(), [](const Link& l) {
      return l.local.address.storage.ss_family == AF_INET;
    });
    if (anyV4)
      std::erase_if(links, [](const Link& l) {
        return l.local.address.storage.ss_family != AF_INET;
      });
  };
  oneFamily(cables);
  oneFamily(lans);
  std::sort(cables.begin(), cables.end(), byKey);
  std::sort(lans.begin(), lans.end(), byKey);
  if (!cables.empty()) return cables;
  if (!lans.empty()) return {lans.front()};
  return {};
}

}  // namespace

const char* linkKindName(LinkKind kind) {
  switch (kind) {
    case LinkKind::Cable:
      return "cable";
    case LinkKind::Lan:
      return "lan";
    case LinkKind::Routed:
      return "routed";
    case LinkKind::Loopback:
      return "loopback";
  }
  return "?";
}

std::string linkLabel(const Link& l) {
  return std::string(linkKindName(l.kind)) + " " + l.local.interfaceName + " " +
         l.local.address.host() + " -> " + l.remote.interfaceName + " " +
         l.remote.address.host();
}

std::vector<Link> chooseLinks(const std::vector<Endpoint>& mine,
                              const std::vector<Endpoint>& peer,
                              bool sameHost) {
  if (sameHost) {
    for (const auto& m : mine)
      if (m.loopback && m.allowed)
        for (const auto& p : peer)
          if (p.loopback && p.allowed &&
              p.address.storage.ss_family == m.address.storage.ss_family)
            return {{LinkKind::Loopback, m, p}};
  }
  std::vector<Link> links = usablePairs(mine, peer, true);
  if (!links.empty()) return links;
  // A routed path: the first allowed non-loopback address of each side, of
  // one family.
  for (const auto& m : mine) {
    if (m.loopback || !m.allowed) continue;
    for (const auto& p : peer)
      if (!p.loopback && p.allowed &&
          p.address.storage.ss_family == m.address.storage.ss_family)
        return {{LinkKind::Routed, m, p}};
  }
  return {};
}

bool cableLeftUnused(const std::vector<Endpoint>& mine,
                     const std::vector<Endpoint>& peer,
                     const std::vector<Link>& chosen) {
  std::vector<Link> all = usablePairs(mine, peer, false);
  bool hostsHaveCable = !all.empty() && all.front().kind == LinkKind::Cable;
  bool usingCable = !chosen.empty() && chosen.front().kind == LinkKind::Cable;
  return hostsHaveCable && (!usingCable || chosen.size() < all.size());
}

std::vector<uint8_t> encodeEndpoints(const std::vector<Endpoint>& endpoints) {
  WireWriter w;
  w.u32(static_cast<uint32_t>(endpoints.size()));
  for (const auto& e : endpoints) {
    w.str(e.interfaceName);
    w.str(e.address.host());
    w.u32(static_cast<uint32_t>(e.address.port()));
    w.u32(static_cast<uint32_t>(e.prefixLength));
    w.u8(e.loopback ? 1 : 0);
    w.u8(e.allowed ? 1 : 0);
  }
  return w.take();
}

std::vector<Endpoint> decodeEndpoints(const std::vector<uint8_t>& bytes) {
  WireReader r(bytes.data(), bytes.size(), "tcp endpoints");
  uint32_t n = r.u32();
  if (n > 256 || n > r.remaining() / 14)
    throw error(mclRemoteError, "malformed tcp endpoints: %u entries", n);
  std::vector<Endpoint> out(n);
  for (auto& e : out) {
    e.interfaceName = r.str(64);
    std::string host = r.str(64);
    uint32_t port = r.u32();
    e.prefixLength = static_cast<int>(r.u32());
    e.loopback = r.u8() != 0;
    e.allowed = r.u8() != 0;
    try {
      e.address =
          platform::SocketAddress::fromNumeric(host, static_cast<int>(port));
    } catch (const std::invalid_argument&) {
      throw error(mclRemoteError, "malformed tcp endpoint address '%s'",
                  host.c_str());
    }
  }
  r.finish();
  return out;
}

std::vector<Endpoint> onlyInterfaces(const std::vector<Endpoint>& endpoints,
                                     const std::set<std::string>& names) {
  if (names.empty()) return endpoints;
  std::vector<Endpoint> kept;
  for (const Endpoint& e : endpoints)
    if (names.count(e.interfaceName) != 0) kept.push_back(e);
  return kept;
}

std::vector<Endpoint> withoutInterfaces(const std::vector<Endpoint>& endpoints,
                                        const std::vector<Link>& links,
                                        bool local) {
  std::vector<Endpoint> kept;
  for (const Endpoint& e : endpoints)
    if (std::none_of(links.begin(), links.end(), [&](const Link& l) {
          return (local ? l.local : l.remote).interfaceName == e.interfaceName;
        }))
      kept.push_back(e);
  return kept;
}

}  // namespace mcl::transport::tcp
