#include "transports/tcp/tcp_device.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/wire.h"

namespace mcl::transport::tcp {

TcpDevice::TcpDevice(const DeviceInit& init)
    : init_(init), options_(loadTcpOptions(*init.params)) {}

Verdict TcpDevice::reaches(int a, int b) const {
  if (a == b) return Verdict::no("a rank's own connection is shared memory");
  return Verdict::yes();
}

void TcpDevice::open(const std::vector<int>&, platform::Deadline) {
  // Every rank listens when any pair of the communicator may use TCP: the
  // topology names the links of every pair from everyone's endpoints.
  sockets_ =
      std::make_unique<TcpSockets>(init_.rank, init_.secret, commId_, options_);
}

std::vector<uint8_t> TcpDevice::details() const {
  WireWriter w;
  w.u32(static_cast<uint32_t>(options_.socketsPerLink));
  w.u32(options_.slots.slots);
  w.u32(options_.slots.slotBytes);
  w.u32(static_cast<uint32_t>(options_.protect));
  w.u32(aesGcmAvailable() ? 1 : 0);
  std::vector<uint8_t> endpoints = encodeEndpoints(sockets_->endpoints());
  w.blob(endpoints.data(), endpoints.size());
  return w.take();
}

void TcpDevice::learn(const std::vector<std::vector<uint8_t>>& all,
                      const topology::Cluster& cluster) {
  cluster_ = &cluster;
  capacity_ = UINT64_MAX;
  endpoints_.clear();
  bool everyRankHasAesGcm = true;
  for (size_t r = 0; r < all.size(); ++r) {
    WireReader in(all[r].data(), all[r].size(), "TCP details");
    uint32_t sockets = in.u32();
    uint32_t slots = in.u32();
    uint32_t slotBytes = in.u32();
    const uint32_t protect = in.u32();
    const bool aesGcm = in.u32() != 0;
    everyRankHasAesGcm = everyRankHasAesGcm && aesGcm;
    endpoints_.push_back(decodeEndpoints(in.blob(64 * 1024)));
    in.finish();
    // Ring schedules size their rounds alike on every rank, and both ends
    // of a link must open the same sockets.
    if (sockets != uint32_t(options_.socketsPerLink) ||
        slotBytes != options_.slots.slotBytes)
      throw error(mclInvalidUsage,
                  "%s: rank %zu has MCL_TCP_NSOCKS=%u MCL_TCP_SLOT_BYTES=%u, "
                  "this rank %d and %u: set them alike on every rank",
                  init_.label.c_str(), r, sockets, slotBytes,
                  options_.socketsPerLink, options_.slots.slotBytes);
    // Both ends of a socket must protect its pieces alike.
    if (protect != static_cast<uint32_t>(options_.protect))
      throw error(mclInvalidUsage,
                  "%s: rank %zu has MCL_WIRE_PROTECT=%s, this rank %d has %s: "
                  "set it alike on every rank",
                  init_.label.c_str(), r,
                  protect <= static_cast<uint32_t>(WireProtect::Encrypt)
                      ? wireProtectName(static_cast<WireProtect>(protect))
                      : "an unknown mode",
                  init_.rank, wireProtectName(options_.protect));
    capacity_ = std::min(capacity_, uint64_t{slots} * slotBytes);
  }
  if (sockets_)
    sockets_->useCipher(everyRankHasAesGcm ? PieceCipher::Aes256Gcm
                                           : PieceCipher::ChaCha20Poly1305);
}

InterfaceRestriction TcpDevice::restrictionFor(int a, int b) const {
  InterfaceRestriction r;
  const topology::Cluster& c = *cluster_;
  if (c.source.rfind("file", 0) != 0) return r;
  int ha = c.hostOfRank(a);
  int hb = c.hostOfRank(b);
  for (const topology::ClusterLink& l : c.links) {
    if (l.a.interface.empty() || l.b.interface.empty()) continue;
    if (l.a.host == ha && l.b.host == hb) {
      r.local.insert(l.a.interface);
      r.remote.insert(l.b.interface);
    } else if (l.a.host == hb && l.b.host == ha) {
      r.local.insert(l.b.interface);
      r.remote.insert(l.a.interface);
    }
  }
  return r;
}

bool TcpDevice::canStandBy(int a, int b) const {
  // A piece behind a standby record's 64-byte head needs a larger slot
  // (alike on every rank: learn() checked).
  if (a == b || endpoints_.empty() || options_.slots.slotBytes <= 64)
    return false;
  const InterfaceRestriction only = restrictionFor(a, b);
  if (!only.local.empty() || !only.remote.empty()) return false;
  const bool sameHost = places_[size_t(a)].hostId == places_[size_t(b)].hostId;
  const std::vector<Link> links =
      chooseLinks(endpoints_[size_t(a)], endpoints_[size_t(b)], sameHost);
  return !links.empty() && links.front().kind != LinkKind::Routed;
}

void TcpDevice::describePath(int a, int b, topology::RankPath& path) const {
  // Once connected, this rank's own pairs are described by the links they
  // use (init may have left out a cable that carried nothing, or started
  // on the LAN); other pairs by what init would choose.
  const int me = init_.rank;
  if (sockets_ && (a == me || b == me)) {
    const auto used = sockets_->links().find(a == me ? b : a);
    if (used != sockets_->links().end() && !used->second.empty()) {
      path.linkKind = linkKindName(used->second.front().kind);
      for (const Link& l : used->second)
        path.links.push_back(
            a == me ? l.local.interfaceName + ">" + l.remote.interfaceName
                    : l.remote.interfaceName + ">" + l.local.interfaceName);
      return;
    }
  }
  InterfaceRestriction only = restrictionFor(a, b);
  bool sameHost = places_[size_t(a)].hostId == places_[size_t(b)].hostId;
  std::vector<Link> links =
      chooseLinks(onlyInterfaces(endpoints_[size_t(a)], only.local),
                  onlyInterfaces(endpoints_[size_t(b)], only.remote), sameHost);
  if (!links.empty()) path.linkKind = linkKindName(links.front().kind);
  for (const Link& l : links)
    path.links.push_back(l.local.interfaceName + ">" + l.remote.interfaceName);
}

void TcpDevice::connect(const std::vector<int>& peers, InitExchange& exchange,
                        platform::Deadline deadline) {
  std::vector<bool> sameHost;
  for (const RankPlace& p : places_)
    sameHost.push_back(p.hostId == places_[size_t(init_.rank)].hostId);
  std::map<int, InterfaceRestriction> restrictions;
  for (int peer = 0; peer < init_.nranks; ++peer) {
    if (peer == init_.rank) continue;
    InterfaceRestriction r = restrictionFor(init_.rank, peer);
    if (!r.local.empty()) restrictions[peer] = r;
  }
  sockets_->connectPeers(endpoints_, peers, sameHost, restrictions, deadline,
                         [&exchange] { exchange.throwIfAbandoned(); });
  peers_ = peers.size();
}

std::unique_ptr<Connection> TcpDevice::connection(int peer, Channel channel) {
  return sockets_->connect(peer, static_cast<uint32_t>(channel));
}

namespace {

WatchedLink watchedLink(const Link& l) {
  WatchedLink w;
  w.kind = linkKindName(l.kind);
  w.localInterface = l.local.interfaceName;
  w.localAddress = l.local.address.host();
  w.prefixLength = l.local.prefixLength;
  w.remoteInterface = l.remote.interfaceName;
  w.remoteAddress = l.remote.address.host();
  return w;
}

}  // namespace

std::vector<PeerLinks> TcpDevice::watchedLinks() const {
  std::vector<PeerLinks> out;
  if (!sockets_) return out;
  const int me = init_.rank;
  for (const auto& [peer, links] : sockets_->links()) {
    if (links.empty() || links.front().kind == LinkKind::Loopback) continue;
    PeerLinks p;
    p.peer = peer;
    for (const Link& l : links) {
      p.links.push_back(watchedLink(l));
      p.links.back().downSignal = sockets_->linkDownSignal(peer, l);
      p.links.back().wake = [waker = &sockets_->waker()] {
        waker->interrupt();
      };
    }
    // What init would have chosen without these links' interfaces, nor
    // those of the cables init left out (they carried nothing).
    std::vector<Link> taken = links;
    if (auto d = sockets_->droppedLinks().find(peer);
        d != sockets_->droppedLinks().end()) {
      taken.insert(taken.end(), d->second.begin(), d->second.end());
      for (const Link& l : d->second) p.leftOut.push_back(watchedLink(l));
    }
    std::vector<Endpoint> mine;
    std::vector<Endpoint> theirs;
    for (const Endpoint& e :
         withoutInterfaces(endpoints_[size_t(me)], taken, true))
      if (e.allowed) mine.push_back(e);
    for (const Endpoint& e :
         withoutInterfaces(endpoints_[size_t(peer)], taken, false))
      if (e.allowed) theirs.push_back(e);
    // Not a routed path (any two addresses: not known to lead anywhere),
    // and nothing where MCL_TOPO_FILE pins the pair's interfaces.
    const std::vector<Link> other = restrictionFor(me, peer).local.empty()
                                        ? chooseLinks(mine, theirs, false)
                                        : std::vector<Link>{};
    if (!other.empty() && other.front().kind != LinkKind::Routed)
      p.fallback = std::string(linkKindName(other.front().kind)) + " " +
                   other.front().local.interfaceName + " (" +
                   other.front().local.address.host() + ") -> " +
                   other.front().remote.interfaceName + " (" +
                   other.front().remote.address.host() + ")";
    p.movesToFallback = !p.fallback.empty() && sockets_->hasStandby(peer);
    if (const Link* standby = sockets_->standbyLink(peer);
        p.movesToFallback && standby != nullptr) {
      p.fallbackAddress = standby->local.address.host();
      p.fallbackPeerAddress = standby->remote.address.host();
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::pair<std::string, uint64_t>> TcpDevice::counters() const {
  uint64_t sent = 0;
  uint64_t resent = 0;
  uint64_t givenUp = 0;
  uint64_t moved = 0;
  uint64_t back = 0;
  if (!sockets_) return {};  // not opened: no peer over TCP
  for (const TcpConnection* c : sockets_->connectionsMade()) {
    sent += c->bytesHandedOver();
    resent += c->bytesResent();
    givenUp += c->socketsLost();
    moved += c->bytesMoved();
    back += c->socketsRegained();
  }
  return {{"bytes_sent", sent},
          {"bytes_resent", resent},
          {"sockets_given_up", givenUp},
          {"bytes_moved", moved},
          {"sockets_taken_back", back}};
}

BufferUse TcpDevice::bufferUse() const {
  // A connection per channel, each with its pieces both ways.
  BufferUse u;
  u.bytesPerWire = uint64_t{kTcpChannels} * 2 * options_.slots.slots *
                   options_.slots.slotBytes;
  u.settings = "MCL_TCP_SLOTS x MCL_TCP_SLOT_BYTES";
  u.wires = peers_;
  return u;
}

}  // namespace mcl::transport::tcp
