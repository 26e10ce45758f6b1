#include "core/liveness/peer_watch.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "base/port_range.h"
#include "base/stranger_policy.h"
#include "core/liveness/watch_wire.h"
#include "core/params/params.h"
#include "platform/socket.h"
#include "platform/tcp_progress.h"

// What the peer watch decides on what it hears: beats, farewells, deaths
// and silences, and what it tells an operation that asks about a peer. Its
// connections are made in peer_watch_links.cpp, its bytes in watch_wire.

namespace mcl {

namespace {

// A peer whose socket closed without a farewell is reported dead this
// long after, and one that said goodbye gone: frames it sent just before
// may still be on a link.
constexpr int64_t kDeathGraceNs = 100'000'000;
// How often the links are looked at without a notice from the OS.
constexpr int64_t kCableLookNs = 250'000'000;
// The least time between two looks, however many notices come.
constexpr int64_t kCableGapNs = 20'000'000;

}  // namespace

int64_t PeerWatch::watchNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             platform::Clock::now().time_since_epoch())
      .count();
}

PeerWatch::PeerWatch(int rank, int nranks, uint64_t commId,
                     const Secret& secret, const platform::SocketAddress& local,
                     std::chrono::milliseconds peerTimeout, std::string label)
    : rank_(rank),
      nranks_(nranks),
      commId_(commId),
      secret_(secret),
      peerTimeout_(peerTimeout),
      label_(std::move(label)),
      peers_(size_t(nranks)) {
  try {
    listener_ =
        platform::listenTcpInRange(local, stranger_policy::kListenBacklog,
                                   portRangeSetting(environmentParams()));
    platform::openWakePipe(&wakeRead_, &wakeWrite_);
    platform::openWakePipe(&acceptedRead_, &acceptedWrite_);
  } catch (const std::exception& e) {
    closePipes();
    throw error(mclSystemError, "%s: cannot open the side channel on %s: %s",
                label_.c_str(), local.host().c_str(), e.what());
  }
  // Served from the moment it listens: strangers that find the port
  // while this rank is still busy elsewhere in init are accepted and
  // dropped, not left to fill the kernel's queue in front of a peer.
  lowerRanksWaiting_.store(rank_);
  acceptor_ = std::thread([this] { acceptFromLowerRanks(); });
}

void PeerWatch::closePipes() {
  for (int* fd : {&wakeRead_, &wakeWrite_, &acceptedRead_, &acceptedWrite_})
    if (*fd >= 0) {
      close(*fd);
      *fd = -1;
    }
}

PeerWatch::~PeerWatch() {
  stopping_.store(true);
  if (wakeWrite_ >= 0) {
    char b = 1;
    (void)!write(wakeWrite_, &b, 1);
  }
  if (acceptor_.joinable()) acceptor_.join();
  if (thread_.joinable()) thread_.join();
  // The farewell: the peers' links decide about this rank from now on.
  sendToAll(std::string(1, watch_wire::kFarewell));
  closePipes();
}

void PeerWatch::sendToAll(const std::string& message) {
  std::lock_guard<std::mutex> lock(sendMutex_);
  for (int peer = 0; peer < nranks_; ++peer) {
    Peer& p = peers_[size_t(peer)];
    if (!p.socket.valid() || p.muted) continue;
    const std::vector<uint8_t> frame =
        watch_wire::sealFrame(p.keys.send, ++p.sent, message);
    // Never blocks: a full buffer is a peer that does not read, which its
    // own silence will show (a message not sent at all is a gap in the
    // numbers, which the peer allows). A message cut short would garble
    // the rest of the stream: that peer hears nothing more.
    const ssize_t n = send(p.socket.fd(), frame.data(), frame.size(),
                           MSG_DONTWAIT | watch_wire::kSendFlags);
    if (n >= 0 && size_t(n) < frame.size()) p.muted = true;
  }
}

void PeerWatch::sayFarewell(const std::string& reason) {
  sendReason(watch_wire::kGaveUp, reason);
}

void PeerWatch::sayGoodbye(const std::string& reason) {
  sendReason(watch_wire::kGoodbye, reason);
}

void PeerWatch::sendReason(char kind, const std::string& reason) {
  if (saidFarewell_.exchange(true)) return;
  sendToAll(watch_wire::reasonMessage(kind, reason));
}

void PeerWatch::take(int peer, int64_t now) {
  Peer& p = peers_[size_t(peer)];
  size_t at = 0;
  std::string message;
  size_t used = 0;
  for (;;) {
    switch (watch_wire::openFrame(p.inbox, at, p.keys.receive, &p.lastReceived,
                                  &message, &used)) {
      case watch_wire::FrameRead::Incomplete:
        p.inbox.erase(0, at);
        return;
      case watch_wire::FrameRead::NotOurs:
        distrust(p, "sent bytes that are not the side channel's");
        return;
      case watch_wire::FrameRead::Forged:
        distrust(p,
                 "sent a side-channel message that failed its integrity check "
                 "(altered, replayed or forged on the way)");
        return;
      case watch_wire::FrameRead::Message:
        break;
    }
    at += used;
    if (!handle(p, message, now)) {
      distrust(p, "sent bytes that are not the side channel's");
      return;
    }
  }
}

bool PeerWatch::handle(Peer& p, const std::string& bytes, int64_t now) {
  watch_wire::Message message;
  if (!watch_wire::parseMessage(bytes, &message)) return false;
  if (message.kind == watch_wire::kBeat) return true;
  if (message.kind == watch_wire::kFarewell) {
    p.saidFarewell = true;
    return true;
  }
  {
    std::lock_guard<std::mutex> lock(reasonMutex_);
    p.reason = message.reason;
  }
  p.changedNs.store(now);
  p.finished.store(message.kind == watch_wire::kGoodbye);
  p.state.store(int(State::GaveUp));
  return true;
}

void PeerWatch::distrust(Peer& p, const char* why) {
  // Not a message of this peer: the peer (or the path to it) is not one
  // to trust.
  {
    std::lock_guard<std::mutex> lock(reasonMutex_);
    p.reason = why;
  }
  p.state.store(int(State::GaveUp));
  p.inbox.clear();
}

void PeerWatch::readFrom(int peer, int64_t now) {
  Peer& p = peers_[size_t(peer)];
  char buf[256];
  for (;;) {
    const ssize_t n = recv(p.socket.fd(), buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) {
      p.lastHeardNs.store(now);
      // Beats again (a debugger let it go, a cable came back): it answers.
      int stopped = int(State::Stopped);
      p.state.compare_exchange_strong(stopped, int(State::Alive));
      p.inbox.append(buf, size_t(n));
      if (p.inbox.size() >
          watch_wire::kFrameHeaderBytes + watch_wire::kMaxSealedBytes + 4096)
        p.inbox.clear();
      take(peer, now);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
      return;
    // Closed (or reset): a farewell before it is a communicator destroyed,
    // none a process that died. A connection that timed out or lost its
    // route says nothing of the process: its path failed.
    const bool cut = n < 0 && errno != ECONNRESET && errno != EPIPE;
    if (cut) p.cutErrno.store(errno);
    const State s = p.saidFarewell ? State::Left
                    : cut          ? State::Cut
                                   : State::Died;
    p.changedNs.store(now);
    // Gave up, then died or left: why it gave up is still the news.
    if (State(p.state.load()) != State::GaveUp) p.state.store(int(s));
    // Info only: whether it matters is for an operation that waits on the
    // peer to say (a script may end without destroying its communicator).
    if (s == State::Died)
      MCL_LOG(Info, kLogInit,
              "%s: rank %d's process died (its side channel closed without "
              "a farewell)",
              label_.c_str(), peer);
    std::lock_guard<std::mutex> lock(sendMutex_);
    p.socket.close();
    return;
  }
}

void PeerWatch::lookAtSideChannels(CableWatch& cables, int64_t now) {
  for (int peer = 0; peer < nranks_; ++peer) {
    Peer& p = peers_[size_t(peer)];
    if (!p.socket.valid() || p.state.load() != int(State::Alive)) continue;
    platform::TcpProgress progress;
    if (!platform::readTcpProgress(p.socket.fd(), &progress)) continue;
    std::string local;
    std::string remote;
    try {
      local = platform::localAddress(p.socket.fd()).host();
      remote = platform::peerAddress(p.socket.fd()).host();
    } catch (const std::exception&) {
      continue;
    }
    int timeouts = 0;
    const bool silent = p.silence.silent(progress, now, &timeouts);
    cables.sideChannel(peer, local, remote, silent, timeouts);
  }
}

void PeerWatch::lookForStopped(int64_t now, int64_t timeoutNs, int64_t beatNs,
                               const CableWatch* cables) {
  for (int peer = 0; peer < nranks_; ++peer) {
    Peer& p = peers_[size_t(peer)];
    if (peer == rank_ || p.state.load() != int(State::Alive)) continue;
    // The side channel rides a link that is lost while the data goes on
    // over others: its silence says nothing of the peer.
    const std::string lost =
        cables != nullptr ? cables->sideChannelLost(peer) : std::string();
    if (!lost.empty() && now - p.lastHeardNs.load() > beatNs * 2) {
      if (!p.sideLinkLostTold)
        MCL_LOG(Warn, kLogInit,
                "%s: the side channel to rank %d rides %s, which is lost: "
                "its heartbeat goes unheard while the job goes on over the "
                "other links. A process there that exits is still seen at "
                "once (its links close); one that stops, only at "
                "MCL_TIMEOUT",
                label_.c_str(), peer, lost.c_str());
      p.sideLinkLostTold = true;
      p.lastHeardNs.store(now - beatNs);
      continue;
    }
    if (now - p.lastHeardNs.load() > timeoutNs) {
      p.changedNs.store(now);
      p.state.store(int(State::Stopped));
      MCL_LOG(Info, kLogInit,
              "%s: rank %d stopped answering: no heartbeat for %.3g s "
              "(MCL_PEER_TIMEOUT)",
              label_.c_str(), peer, double(timeoutNs) / 1e9);
    }
  }
}

void PeerWatch::run() {
  const int64_t timeoutNs =
      std::chrono::duration_cast<std::chrono::nanoseconds>(peerTimeout_)
          .count();
  const int64_t beatNs = std::min<int64_t>(1'000'000'000, timeoutNs / 8);
  int64_t nextBeat = 0;
  int64_t nextCableLook = 0;
  int64_t lastCableLook = 0;
  std::vector<pollfd> fds;
  std::vector<int> who;
  while (!stopping_.load()) {
    int64_t now = watchNowNs();
    if (now >= nextBeat) {
      sendToAll(std::string(1, watch_wire::kBeat));
      nextBeat = now + beatNs;
    }
    CableWatch* cables = cables_.load();
    fds.assign(1, pollfd{wakeRead_, POLLIN, 0});
    who.assign(1, -1);
    if (cables != nullptr && linkEvents_->fd() >= 0) {
      fds.push_back(pollfd{linkEvents_->fd(), POLLIN, 0});
      who.push_back(-1);
    }
    const size_t firstPeer = fds.size();
    for (int peer = 0; peer < nranks_; ++peer)
      if (peers_[size_t(peer)].socket.valid()) {
        fds.push_back(pollfd{peers_[size_t(peer)].socket.fd(), POLLIN, 0});
        who.push_back(peer);
      }
    const int64_t wakeAt =
        cables != nullptr ? std::min(nextBeat, nextCableLook) : nextBeat;
    const int ms = int(std::max<int64_t>(1, (wakeAt - now) / 1'000'000));
    if (poll(fds.data(), fds.size(), ms) < 0 && errno != EINTR) return;
    if ((fds[0].revents & POLLIN) != 0) {  // woken: take every byte
      char drain[64];
      while (read(wakeRead_, drain, sizeof(drain)) > 0) {
      }
    }
    now = watchNowNs();
    for (size_t i = firstPeer; i < fds.size(); ++i)
      if (fds[i].revents != 0) readFrom(who[i], now);
    // The OS said a link changed: look soon, but not at every message (the
    // routing socket on macOS carries every route change of the host).
    if (cables != nullptr && firstPeer == 2 && fds[1].revents != 0 &&
        linkEvents_->drain())
      nextCableLook = std::min(nextCableLook, lastCableLook + kCableGapNs);
    if (cables != nullptr && now >= nextCableLook) {
      cables->check(now);
      lookAtSideChannels(*cables, now);
      lastCableLook = now;
      nextCableLook = now + kCableLookNs;
    }
    lookForStopped(now, timeoutNs, beatNs, cables);
  }
}

void PeerWatch::watchCables(std::unique_ptr<CableWatch> cables) {
  if (!cables || cables->empty() || cableOwner_) return;
  linkEvents_ = std::make_unique<platform::LinkEvents>();
  // The first look, which sets what is watched, as init ends: a cable
  // lost in the job's first second is then lost, not the baseline.
  cables->check(watchNowNs());
  cableOwner_ = std::move(cables);
  cables_.store(cableOwner_.get());
  // Woken now to take it up: asleep until its next beat (up to a second),
  // it would not hear the OS's notices meanwhile, and a communicator that
  // lives less than that (qualify's, one per cable) would see nothing.
  char b = 1;
  (void)!write(wakeWrite_, &b, 1);
}

CableWatch::Counts PeerWatch::cableCounts() const {
  const CableWatch* cables = cables_.load();
  return cables != nullptr ? cables->counts(watchNowNs())
                           : CableWatch::Counts{};
}

std::string PeerWatch::linkNote(int peer) const {
  const CableWatch* cables = cables_.load();
  return cables != nullptr ? cables->noteOn(peer, watchNowNs()) : "";
}

std::string PeerWatch::problemWith(int peer) const {
  if (peer < 0 || peer >= nranks_ || peer == rank_) return "";
  // The cable's own words first: the heartbeat that rode it stops later,
  // and says less.
  if (const CableWatch* cables = cables_.load())
    if (std::string why = cables->problemWith(peer, watchNowNs()); !why.empty())
      return why;
  const Peer& p = peers_[size_t(peer)];
  const auto state = State(p.state.load());
  if (state == State::Died &&
      watchNowNs() - p.changedNs.load() >= kDeathGraceNs)
    return "rank " + std::to_string(peer) +
           "'s process died (its side channel closed without a farewell)";
  // A peer that destroyed its communicator told the side channel after
  // its last sends, which may still be on the way (a 2-rank all-reduce
  // whose last piece trails the goodbye): the news counts after the same
  // grace as a death. A peer that gave up is news at once.
  if (state == State::GaveUp &&
      (!p.finished.load() ||
       watchNowNs() - p.changedNs.load() >= kDeathGraceNs)) {
    std::lock_guard<std::mutex> lock(reasonMutex_);
    return "peer rank " + std::to_string(peer) + " is gone (" + p.reason + ")";
  }
  // A side channel cut by the network says so only where no other link
  // to the peer is up: else the data's own links decide (they may carry
  // on where the side channel's path failed).
  if (state == State::Cut &&
      watchNowNs() - p.changedNs.load() >= kDeathGraceNs) {
    const CableWatch* cables = cables_.load();
    if (cables == nullptr || !cables->someLinkUp(peer))
      return "rank " + std::to_string(peer) +
             " cannot be reached: its side channel's connection broke (" +
             strerror(p.cutErrno.load()) +
             "): the links to it are gone or carry nothing";
  }
  if (state == State::Stopped) {
    char text[256];
    snprintf(text, sizeof(text),
             "rank %d stopped answering: no heartbeat for %.3g s "
             "(MCL_PEER_TIMEOUT; its host is down, every link to it is gone, "
             "or its process is stopped)",
             peer, double(peerTimeout_.count()) / 1000.0);
    return text;
  }
  return "";
}

std::string PeerWatch::farewellOf(int peer) const {
  if (peer < 0 || peer >= nranks_ || peer == rank_) return "";
  const Peer& p = peers_[size_t(peer)];
  if (State(p.state.load()) != State::GaveUp) return "";
  std::lock_guard<std::mutex> lock(reasonMutex_);
  return p.reason;
}

}  // namespace mcl
