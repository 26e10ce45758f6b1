#include "core/liveness/cable_watch.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/log.h"
#include "platform/link_state.h"

namespace mcl {

namespace {

std::string seconds(int64_t ns) {
  char text[32];
  snprintf(text, sizeof(text), "%.1f s", double(ns) / 1e9);
  return text;
}

}  // namespace

CableWatch::CableWatch(int rank, std::string label,
                       std::vector<std::string> hosts,
                       std::vector<transport::PeerLinks> peers)
    : rank_(rank), label_(std::move(label)), hosts_(std::move(hosts)) {
  for (transport::PeerLinks& p : peers) {
    leftOutAtInit_ += p.leftOut.size();
    if (p.links.empty()) continue;
    Peer mine;
    mine.peer = p.peer;
    mine.fallback = std::move(p.fallback);
    mine.fallbackAddress = std::move(p.fallbackAddress);
    mine.fallbackPeerAddress = std::move(p.fallbackPeerAddress);
    mine.movesToFallback = p.movesToFallback;
    mine.standbyOnly = p.standbyOnly;
    for (transport::WatchedLink& l : p.links)
      if (l.kind != "routed")
        mine.links.push_back(Watched{std::move(l), false, 0});
    if (!mine.links.empty()) peers_.push_back(std::move(mine));
  }
}

std::string CableWatch::nameOf(const Peer& p, const Watched& w) const {
  const auto host = [this](int r) {
    return r >= 0 && size_t(r) < hosts_.size() ? hosts_[size_t(r)]
                                               : "rank " + std::to_string(r);
  };
  return w.link.kind + " " + host(rank_) + " " + w.link.localInterface + " " +
         w.link.localAddress + "/" + std::to_string(w.link.prefixLength) +
         " -> " + host(p.peer) + " " + w.link.remoteInterface + " " +
         w.link.remoteAddress;
}

void CableWatch::check(int64_t now) {
  std::map<std::string, platform::InterfaceLink> states;
  try {
    states = platform::readInterfaceLinks();
  } catch (const std::exception&) {
    return;  // no verdict without a reading; the next look tries again
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (!baselineTaken_) return takeBaseline(states);
  for (Peer& p : peers_) {
    int up = 0;
    for (Watched& w : p.links) {
      const auto it = states.find(w.link.localInterface);
      // Gone, down, without a carrier, or without our address: nothing
      // goes out on it.
      const bool usable = it != states.end() && it->second.usable() &&
                          it->second.addresses.count(w.link.localAddress) > 0;
      if (usable) ++up;
      if (usable == !w.down) continue;
      w.down = !usable;
      w.changedNs = now;
      if (w.link.downSignal) w.link.downSignal->store(w.down);
      if (w.link.wake) w.link.wake();
      if (w.down)
        ++lost_;
      else
        ++regained_;
    }
    const int total = int(p.links.size());
    const bool noneBefore = p.allDownSinceNs >= 0;
    if (up == 0 && !noneBefore) p.allDownSinceNs = now;
    if (up > 0) p.allDownSinceNs = -1;
    if (up < total && p.fewerSinceNs < 0) p.fewerSinceNs = now;
    if (up == total && p.fewerSinceNs >= 0) {
      p.fewerNs += now - p.fewerSinceNs;
      p.fewerSinceNs = -1;
    }
    for (const Watched& w : p.links)
      if (w.changedNs == now) sayChange(p, w, up, total);
  }
}

void CableWatch::sayChange(const Peer& p, const Watched& w, int up,
                           int total) const {
  const std::string name = nameOf(p, w);
  if (!w.down) {
    MCL_LOG(Warn, kLogInit,
            "%s: %s to rank %d is up again; %d of %d links to rank %d up",
            label_.c_str(), name.c_str(), p.peer, up, total, p.peer);
  } else if (up > 0) {
    MCL_LOG(Warn, kLogInit,
            "%s: %s to rank %d went down (its interface lost its link "
            "or address); %d of %d links to rank %d remain, and the "
            "connections striped over it carry on over them (what it "
            "carried is sent again there). Once it is back, TCP "
            "connections take it back; RDMA ones leave it to a "
            "communicator made later",
            label_.c_str(), name.c_str(), p.peer, up, total, p.peer);
  } else if (p.movesToFallback) {
    MCL_LOG(Warn, kLogInit,
            "%s: %s to rank %d went down (its interface lost its link "
            "or address): no cable to rank %d is left, and the "
            "connections move to the %s, the path init would choose "
            "now (what it carried is sent again there). The cable is "
            "taken back once it is back",
            label_.c_str(), name.c_str(), p.peer, p.peer, p.fallback.c_str());
  } else if (!p.fallback.empty()) {
    MCL_LOG(Warn, kLogInit,
            "%s: %s to rank %d went down (its interface lost its link "
            "or address): no link to rank %d is left. Init would now "
            "choose the %s, but mcl does not yet move a running "
            "connection: operations with rank %d wait for the link to "
            "come back, up to MCL_TIMEOUT",
            label_.c_str(), name.c_str(), p.peer, p.peer, p.fallback.c_str(),
            p.peer);
  } else {
    MCL_LOG(Warn, kLogInit,
            "%s: %s to rank %d went down (its interface lost its link "
            "or address): no path to rank %d is left; operations with "
            "it fail unless the link is back within %s",
            label_.c_str(), name.c_str(), p.peer, p.peer,
            seconds(kNoPathGraceNs).c_str());
  }
}

void CableWatch::takeBaseline(
    const std::map<std::string, platform::InterfaceLink>& states) {
  baselineTaken_ = true;
  for (Peer& p : peers_)
    std::erase_if(p.links, [&states](const Watched& w) {
      const auto it = states.find(w.link.localInterface);
      return it == states.end() || !it->second.usable() ||
             it->second.addresses.count(w.link.localAddress) == 0;
    });
  std::erase_if(peers_, [](const Peer& p) { return p.links.empty(); });
}

std::string CableWatch::downList(const Peer& p, int64_t now) const {
  std::string out;
  for (const Watched& w : p.links) {
    if (!w.down) continue;
    if (!out.empty()) out += ", ";
    out += nameOf(p, w) + " down for " + seconds(now - w.changedNs);
  }
  return out;
}

void CableWatch::sideChannel(int peer, const std::string& localAddress,
                             const std::string& peerAddress, bool silent,
                             int timeouts) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Peer& p : peers_) {
    if (p.peer != peer) continue;
    const int before = p.silentLink;
    p.silentLink = -1;
    p.sideLink = -1;
    for (size_t l = 0; l < p.links.size(); ++l)
      if (p.links[l].link.localAddress == localAddress) p.sideLink = int(l);
    if (silent) p.silentLink = p.sideLink;
    p.silentTimeouts = timeouts;
    p.fallbackSilent = silent && !p.fallbackAddress.empty() &&
                       localAddress == p.fallbackAddress &&
                       peerAddress == p.fallbackPeerAddress;
    if (p.silentLink >= 0 && before < 0)
      MCL_LOG(Warn, kLogInit,
              "%s: %s to rank %d carries nothing: the side channel's "
              "heartbeats on it go unacknowledged (%d retransmission "
              "timeouts in a row)",
              label_.c_str(), nameOf(p, p.links[size_t(p.silentLink)]).c_str(),
              p.peer, timeouts);
  }
}

std::string CableWatch::problemWith(int peer, int64_t now) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Peer& p : peers_) {
    if (p.peer != peer || p.standbyOnly) continue;
    if (!p.fallback.empty()) return fallbackProblem(p, now);
    if (p.allDownSinceNs >= 0) {
      if (now - p.allDownSinceNs < kNoPathGraceNs) return "";
      return "no path to rank " + std::to_string(peer) +
             " is left: " + downList(p, now) +
             " (at this end; no LAN or routed path to it)";
    }
    // Every link down but the one the silent side channel rides.
    if (p.silentLink < 0) return "";
    for (size_t l = 0; l < p.links.size(); ++l)
      if (int(l) != p.silentLink && !p.links[l].down) return "";
    const std::string down = downList(p, now);
    return "no path to rank " + std::to_string(peer) + " is left: " +
           (down.empty() ? "every link is silent: "
                         : "its last link up is silent: ") +
           nameOf(p, p.links[size_t(p.silentLink)]) +
           " (the side channel: " + std::to_string(p.silentTimeouts) +
           " retransmission timeouts in a row): up, but nothing sent on it "
           "is acknowledged" +
           (down.empty() ? "" : "; " + down) + " (no LAN or routed path to it)";
  }
  return "";
}

std::string CableWatch::fallbackProblem(const Peer& p, int64_t now) const {
  // Where the connections moved to the fallback with every cable down, the
  // side channel riding it speaks for it: silent there, nothing is left.
  // A rank that only waits to receive has nothing of its own on the way
  // to find that out with.
  // A flap of the last cable is ridden out, as where nothing is beside it.
  if (!p.movesToFallback || !p.fallbackSilent || p.allDownSinceNs < 0 ||
      now - p.allDownSinceNs < kNoPathGraceNs)
    return "";
  return "no path to rank " + std::to_string(p.peer) +
         " is left: every cable is down (" + downList(p, now) + "), and " +
         p.fallback +
         ", where the connections moved, is silent (the side "
         "channel: " +
         std::to_string(p.silentTimeouts) +
         " retransmission timeouts in a row): nothing sent on it is "
         "acknowledged";
}

bool CableWatch::someLinkUp(int peer) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Peer& p : peers_) {
    if (p.peer != peer || p.standbyOnly) continue;
    if (!p.fallback.empty())
      return p.allDownSinceNs < 0 || !p.movesToFallback || !p.fallbackSilent;
    for (size_t l = 0; l < p.links.size(); ++l)
      if (!p.links[l].down && int(l) != p.silentLink) return true;
  }
  return false;
}

std::string CableWatch::sideChannelLost(int peer) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Peer& p : peers_) {
    if (p.peer != peer || p.sideLink < 0) continue;
    const Watched& side = p.links[size_t(p.sideLink)];
    if (!side.down && p.silentLink != p.sideLink) return "";
    for (size_t l = 0; l < p.links.size(); ++l)
      if (int(l) != p.sideLink && !p.links[l].down && int(l) != p.silentLink)
        return nameOf(p, side);
  }
  return "";
}

std::string CableWatch::noteOn(int peer, int64_t now) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Peer& p : peers_)
    if (p.peer == peer) {
      const std::string down = downList(p, now);
      return down.empty() ? "" : "; " + down;
    }
  return "";
}

CableWatch::Counts CableWatch::counts(int64_t now) const {
  std::lock_guard<std::mutex> lock(mutex_);
  Counts c;
  c.lost = lost_;
  c.regained = regained_;
  c.leftOutAtInit = leftOutAtInit_;
  int64_t fewerNs = 0;
  for (const Peer& p : peers_) {
    c.watched += p.links.size();
    for (const Watched& w : p.links) c.downNow += w.down ? 1 : 0;
    fewerNs += p.fewerNs + (p.fewerSinceNs >= 0 ? now - p.fewerSinceNs : 0);
  }
  c.secondsOnFewer = double(fewerNs) / 1e9;
  return c;
}

}  // namespace mcl
