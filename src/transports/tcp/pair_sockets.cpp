// The sockets of one pair of ranks, link by link (TcpSockets::connectPeers):
// the higher rank connects each socket, the lower one takes them from its
// listener. Where the pair has somewhere else to go, a cable the connector
// cannot connect over within kDeadLinkBudget (one that carries nothing, or
// is down at one end) is left out and the pair starts on its other cables,
// or, where no cable works, on the LAN beside them. The connector's sealed
// verdict tells the acceptor which links remain, so both build their
// connections on the same sockets in the same order.
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "platform/socket.h"
#include "transports/tcp/link_choice.h"
#include "transports/tcp/tcp_handshake.h"
#include "transports/tcp/tcp_sockets.h"

namespace mcl::transport::tcp {

namespace {

// A working link connects in milliseconds; a dead one never does. Init
// waits this long on it, once per link, before starting without it.
constexpr auto kDeadLinkBudget = std::chrono::seconds(2);
// The standby over the LAN is not needed to start: a LAN that does not
// connect this soon is not waited on.
constexpr auto kStandbyBudget = std::chrono::seconds(1);

// The standby's own deadline: init's, or a second from now if sooner.
platform::Deadline standbyDeadline(platform::Deadline deadline) {
  return std::min(deadline,
                  platform::Clock::now() +
                      std::chrono::duration_cast<platform::Clock::duration>(
                          kStandbyBudget));
}

void sayNoStandby(int rank, int peer, const Link& link, const char* why) {
  MCL_LOG(Info, kLogInit,
          "rank %d: no standby to rank %d over %s (%s): should every cable "
          "to it be lost, the job waits for one to come back",
          rank, peer, linkLabel(link).c_str(), why);
}

std::string linksText(const std::vector<Link>& links) {
  std::string text;
  for (const Link& l : links) text += (text.empty() ? "" : ", ") + linkLabel(l);
  return text;
}

bool inMask(uint32_t mask, size_t link) { return (mask >> link & 1) != 0; }

// The first cable in mask (of `cables`): where both ends exchange their
// word on the standby.
size_t firstCable(uint32_t mask, size_t cables) {
  size_t l = 0;
  while (l + 1 < cables && !inMask(mask, l)) ++l;
  return l;
}

}  // namespace

std::vector<Link> TcpSockets::candidates(int peer) const {
  std::vector<Link> all = links_.at(peer);
  if (auto f = fallbacks_.find(peer); f != fallbacks_.end())
    all.push_back(f->second);
  return all;
}

TcpSockets::PairSockets TcpSockets::emptyPairSockets(size_t links) {
  PairSockets got(kTcpChannels);
  for (auto& byLink : got) byLink.resize(links);
  return got;
}

void TcpSockets::connectPair(int peer, platform::Deadline deadline) {
  const std::vector<Link> links = candidates(peer);
  const size_t cables = links_.at(peer).size();
  const auto stripes = static_cast<uint32_t>(options_.socketsPerLink);
  PairSockets got = emptyPairSockets(links.size());
  std::vector<std::string> failed(links.size());
  std::optional<Error> firstFailure;
  auto tryLink = [&](uint32_t l, bool bounded) {
    // The link's try, all its sockets together: a working one connects
    // them in milliseconds (a lost SYN costs a second).
    const platform::Deadline linkDeadline =
        bounded ? std::min(
                      deadline,
                      platform::Clock::now() +
                          std::chrono::duration_cast<platform::Clock::duration>(
                              kDeadLinkBudget))
                : deadline;
    for (uint32_t c = 0; c < kTcpChannels; ++c)
      for (uint32_t s = 0; s < stripes && failed[l].empty(); ++s) {
        try {
          ProvenSocket sock = connectAndProve(
              peer, links[l], StreamKey{rank_, c, l, s}, linkDeadline);
          platform::setBufferSizes(sock.socket.fd(), options_.bufferBytes);
          got[c][l].push_back(std::move(sock));
        } catch (const Error& e) {
          const Error named = waitedOver(peer, {links[l]}, e);
          // A peer that does not know the secret is not a dead cable.
          if (!bounded || e.code() == mclRemoteError) throw named;
          failed[l] = e.what();
          if (!firstFailure) firstFailure = named;
        }
      }
  };
  // With somewhere else to go, each cable gets a bounded try; the LAN is
  // tried only when no cable works, as the last way left.
  const bool elsewhere = links.size() > 1;
  for (uint32_t l = 0; l < cables; ++l) tryLink(l, elsewhere);
  uint32_t mask = 0;
  for (uint32_t l = 0; l < cables; ++l)
    if (failed[l].empty()) mask |= 1u << l;
  const bool onCables = mask != 0;
  if (!onCables && links.size() > cables) {
    tryLink(uint32_t(cables), false);
    mask = 1u << cables;
  }
  if (mask == 0) throw *firstFailure;
  // On cables with a LAN beside them: a standby socket over it, for the
  // day every cable is lost (tcp_standby.cpp). Its bit beside the cables'
  // tells the acceptor.
  if (options_.standby && onCables && links.size() > cables &&
      connectStandby(peer, links[cables],
                     StreamKey{rank_, 0, uint32_t(cables), 0}, deadline, &got))
    mask |= 1u << cables;
  // The verdict goes on the first socket of channel 0 of every link tried,
  // those left out too: the acceptor reads it from whichever comes first.
  // Not on the standby: the cables carry it, and a LAN that fails now
  // costs the standby, not the job.
  for (uint32_t l = 0; l < links.size(); ++l) {
    if (got[0][l].empty() || (onCables && l == cables)) continue;
    const ProvenSocket& first = got[0][l].front();
    const std::vector<uint8_t> verdict =
        encodeLinkVerdict(first.keys, uint32_t(links.size()), mask);
    try {
      platform::sendAll(first.socket.fd(), verdict.data(), verdict.size(),
                        deadline);
    } catch (const std::exception&) {
      // A link left out may be gone by now: the others carry the verdict.
      if (inMask(mask, l))
        throw waitedOver(peer, {links[l]}, asError(std::current_exception()));
    }
  }
  if (onCables && inMask(mask, cables) &&
      !standbyKeptByPeer(peer, links, mask, got, deadline)) {
    for (auto& byLink : got) byLink[cables].clear();
    mask &= ~(1u << cables);
  }
  keepLinks(peer, links, mask, std::move(got), [&](size_t l) {
    return "rank " + std::to_string(rank_) +
           " could not connect over it: " + failed[l];
  });
}

uint32_t TcpSockets::awaitVerdict(int peer, const std::vector<Link>& links,
                                  platform::Deadline deadline,
                                  const std::function<void()>& betweenSlices,
                                  std::map<uint32_t, FirstSocket>* firsts) {
  // The connector sends it on the first socket of every link it reached;
  // any of them may die after connecting, so every one that arrives is
  // read until one brings it.
  std::vector<StreamKey> waiting;
  for (uint32_t l = 0; l < links.size(); ++l)
    waiting.push_back(StreamKey{peer, 0, l, 0});
  std::set<uint32_t> closed;
  while (true) {
    StreamKey which;
    while (auto sock = listener_->takeArrived(waiting, &which)) {
      std::erase_if(waiting,
                    [&](const StreamKey& k) { return k.link == which.link; });
      (*firsts)[which.link].sock = std::move(*sock);
    }
    std::vector<pollfd> fds;
    for (auto& [l, first] : *firsts) {
      if (closed.count(l) != 0) continue;
      std::vector<uint8_t>& bytes = first.verdict;
      const size_t had = bytes.size();
      bytes.resize(kLinkVerdictBytes);
      const ssize_t n = recv(first.sock.socket.fd(), bytes.data() + had,
                             kLinkVerdictBytes - had, MSG_DONTWAIT);
      bytes.resize(had + size_t(std::max<ssize_t>(n, 0)));
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
                     errno != EINTR)) {
        closed.insert(l);  // that link died after connecting
        continue;
      }
      if (bytes.size() == kLinkVerdictBytes)
        return checkedVerdict(peer, links, first.sock, bytes);
      fds.push_back(pollfd{first.sock.socket.fd(), POLLIN, 0});
    }
    if (platform::Clock::now() >= deadline) {
      const Error timedOut =
          firsts->empty()
              ? error(mclTimeout,
                      "rank %d: rank %d did not open its TCP connection "
                      "(channel 0, link 0%s, socket 0) within the timeout",
                      rank_, peer, links.size() > 1 ? " or any other" : "")
              : error(mclTimeout,
                      "rank %d: rank %d did not say which links it "
                      "connected over within the timeout",
                      rank_, peer);
      throw waitedOver(peer, links, timedOut);
    }
    try {
      if (betweenSlices) betweenSlices();  // another rank's failure
    } catch (const std::exception&) {
      throw waitedOver(peer, links, asError(std::current_exception()));
    }
    poll(fds.data(), fds.size(), 20);
  }
}

uint32_t TcpSockets::checkedVerdict(int peer, const std::vector<Link>& links,
                                    const ProvenSocket& sock,
                                    const std::vector<uint8_t>& bytes) const {
  uint32_t mask = 0;
  if (!decodeLinkVerdict(sock.keys, bytes.data(), uint32_t(links.size()),
                         &mask))
    throw error(mclRemoteError,
                "rank %d: rank %d's list of the links it connected over "
                "(%s) fails its integrity check, or counts other links",
                rank_, peer, linksText(links).c_str());
  if (mask == 0 || mask >> links.size() != 0)
    throw error(mclRemoteError,
                "rank %d: rank %d's list of the links it connected over "
                "names none of the %zu links (%s)",
                rank_, peer, links.size(), linksText(links).c_str());
  return mask;
}

void TcpSockets::acceptPair(int peer, platform::Deadline deadline,
                            const std::function<void()>& betweenSlices) {
  const std::vector<Link> links = candidates(peer);
  const auto stripes = static_cast<uint32_t>(options_.socketsPerLink);
  std::map<uint32_t, FirstSocket> firsts;  // by link: channel 0, socket 0
  uint32_t mask = awaitVerdict(peer, links, deadline, betweenSlices, &firsts);
  PairSockets got = emptyPairSockets(links.size());
  // A standby (the LAN's bit beside a cable's) has one socket a channel,
  // made before the verdict: taken within kStandbyBudget, or left out.
  const size_t cables = links_.at(peer).size();
  const bool standby = inMask(mask, cables) && (mask & ((1u << cables) - 1));
  for (uint32_t c = 0; c < kTcpChannels; ++c)
    for (uint32_t l = 0; l < links.size(); ++l)
      for (uint32_t s = 0;
           s < (standby && l == cables ? 1 : stripes) && inMask(mask, l); ++s) {
        const StreamKey key{peer, c, l, s};
        if (standby && l == cables) {
          if (!takeStandby(peer, links[l], key, deadline, &firsts, &got))
            mask &= ~(1u << cables);
          continue;
        }
        const bool first = c == 0 && s == 0;
        ProvenSocket sock;
        try {
          // Each used link's first socket carries the verdict: all of it
          // is read before any piece (some of it may be in already), and
          // it must be the same.
          std::vector<uint8_t> verdict;
          if (first && firsts.count(l) != 0) {
            sock = std::move(firsts[l].sock);
            verdict = std::move(firsts[l].verdict);
          } else {
            sock = listener_->take(key, deadline, betweenSlices);
          }
          if (first) {
            const size_t had = verdict.size();
            verdict.resize(kLinkVerdictBytes);
            platform::recvAll(sock.socket.fd(), verdict.data() + had,
                              kLinkVerdictBytes - had, deadline);
            if (checkedVerdict(peer, links, sock, verdict) != mask)
              throw error(mclRemoteError,
                          "rank %d: rank %d's list of the links it "
                          "connected over differs from link to link",
                          rank_, peer);
          }
        } catch (const std::exception&) {
          throw waitedOver(peer, {links[l]}, asError(std::current_exception()));
        }
        platform::setBufferSizes(sock.socket.fd(), options_.bufferBytes);
        got[c][l].push_back(std::move(sock));
      }
  // The connector made a standby: it waits to hear whether this end took
  // it in, so that both keep it or neither does.
  if (standby) {
    const ProvenSocket& first = got[0][firstCable(mask, cables)].front();
    const std::vector<uint8_t> answer =
        encodeLinkVerdict(first.keys, uint32_t(links.size()), mask);
    platform::sendAll(first.socket.fd(), answer.data(), answer.size(),
                      deadline);
  }
  keepLinks(peer, links, mask, std::move(got), [&](size_t) {
    return "rank " + std::to_string(peer) +
           " could not connect over it (it carries nothing, or is down at "
           "one end)";
  });
}

void TcpSockets::keepLinks(int peer, const std::vector<Link>& candidates,
                           uint32_t mask, PairSockets got,
                           const std::function<std::string(size_t)>& why) {
  const size_t cables = links_.at(peer).size();
  const bool standby = inMask(mask, cables) && (mask & ((1u << cables) - 1));
  std::vector<Link> kept;
  for (size_t l = 0; l < candidates.size(); ++l)
    if (inMask(mask, l) && !(standby && l == cables))
      kept.push_back(candidates[l]);
  const std::string goesOn =
      inMask(mask, cables) && !standby
          ? "no cable to it works: the job goes on over " + linksText(kept) +
                ", at the LAN's speed, data " + dataProtection(LinkKind::Lan)
          : "the job goes on over " + linksText(kept) + ", " +
                std::to_string(kept.size()) + " of " + std::to_string(cables) +
                " cables";
  for (size_t l = 0; l < cables; ++l) {
    if (inMask(mask, l)) continue;
    dropped_[peer].push_back(candidates[l]);
    MCL_LOG(Warn, kLogInit,
            "rank %d: %s to rank %d is left out of this job: %s; %s", rank_,
            linkLabel(candidates[l]).c_str(), peer, why(l).c_str(),
            goesOn.c_str());
  }
  for (uint32_t c = 0; c < kTcpChannels; ++c)
    for (size_t l = 0; l < candidates.size(); ++l)
      if (inMask(mask, l))
        for (ProvenSocket& sock : got[c][l]) {
          if (standby && l == cables)
            standby_[{peer, c}] = std::move(sock);
          else
            sockets_[{peer, c}].push_back(std::move(sock));
        }
  links_[peer] = kept;
  if (standby) {
    standbyLinks_[peer] = candidates[cables];
    MCL_LOG(Info, kLogInit,
            "rank %d: to rank %d a standby over %s, data %s: the connections "
            "move there if every cable to it is lost",
            rank_, peer, linkLabel(candidates[cables]).c_str(),
            dataProtection(LinkKind::Lan));
  }
}

bool TcpSockets::standbyKeptByPeer(int peer, const std::vector<Link>& links,
                                   uint32_t mask, const PairSockets& got,
                                   platform::Deadline deadline) {
  const size_t cables = links_.at(peer).size();
  const size_t l = firstCable(mask, cables);
  const ProvenSocket& first = got[0][l].front();
  std::vector<uint8_t> answer(kLinkVerdictBytes);
  try {
    platform::recvAll(first.socket.fd(), answer.data(), answer.size(),
                      deadline);
  } catch (const std::exception&) {
    throw waitedOver(peer, {links[l]}, asError(std::current_exception()));
  }
  uint32_t kept = 0;
  if (!decodeLinkVerdict(first.keys, answer.data(), uint32_t(links.size()),
                         &kept))
    throw error(mclRemoteError,
                "rank %d: rank %d's word on the standby over %s fails its "
                "integrity check",
                rank_, peer, linkLabel(links[cables]).c_str());
  if (inMask(kept, cables)) return true;
  const std::string why =
      "rank " + std::to_string(peer) + " did not take it in within a second";
  sayNoStandby(rank_, peer, links[cables], why.c_str());
  return false;
}

bool TcpSockets::takeStandby(int peer, const Link& link, const StreamKey& key,
                             platform::Deadline deadline,
                             std::map<uint32_t, FirstSocket>* firsts,
                             PairSockets* got) {
  const platform::Deadline until = standbyDeadline(deadline);
  try {
    ProvenSocket sock;
    if (key.channel == 0 && firsts->count(key.link) != 0)
      sock = std::move((*firsts)[key.link].sock);
    else
      sock = listener_->take(key, until, {});
    platform::setBufferSizes(sock.socket.fd(), options_.bufferBytes);
    (*got)[key.channel][key.link].push_back(std::move(sock));
    return true;
  } catch (const std::exception& e) {
    for (auto& byLink : *got) byLink[key.link].clear();
    sayNoStandby(rank_, peer, link, e.what());
    return false;
  }
}

bool TcpSockets::connectStandby(int peer, const Link& link, StreamKey key,
                                platform::Deadline deadline, PairSockets* got) {
  // A LAN that failed one peer's standby is not tried for the next (a
  // Wi-Fi that keeps its clients apart would cost a second per peer).
  if (standbyFailedOn_.count(link.local.interfaceName) != 0) return false;
  const platform::Deadline until = standbyDeadline(deadline);
  try {
    for (uint32_t c = 0; c < kTcpChannels; ++c) {
      key.channel = c;
      ProvenSocket sock = connectAndProve(peer, link, key, until);
      platform::setBufferSizes(sock.socket.fd(), options_.bufferBytes);
      (*got)[c][key.link].push_back(std::move(sock));
    }
    return true;
  } catch (const std::exception& e) {
    // Not needed to start: the job goes on without it.
    for (auto& byLink : *got) byLink[key.link].clear();
    standbyFailedOn_.insert(link.local.interfaceName);
    sayNoStandby(rank_, peer, link, e.what());
    return false;
  }
}

Error TcpSockets::waitedOver(int peer, const std::vector<Link>& links,
                             const Error& e) const {
  // A link that carries nothing stalls init here, and another rank's
  // timeout (relayed by the rendezvous) or this one's says so without the
  // link: this names it, and which side waited.
  const std::string how =
      peer < rank_ ? " to connect to rank " + std::to_string(peer)
                   : " for rank " + std::to_string(peer) + " to connect";
  std::string over;
  for (const Link& l : links)
    over += (over.empty() ? "" : " or ") + linkLabel(l);
  return Error(e.code(), std::string(e.what()) + " (rank " +
                             std::to_string(rank_) + " was waiting" + how +
                             " over " + over + ")");
}

}  // namespace mcl::transport::tcp
