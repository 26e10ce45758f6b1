// The peer watch's connections: each rank connects to the ranks above it
// and accepts those below, every connection proving the job's secret both
// ways before it counts; strangers that find the port are served and
// dropped within the stranger policy's bounds.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "base/auth.h"
#include "base/error.h"
#include "base/session_keys.h"
#include "base/stranger_policy.h"
#include "core/liveness/peer_watch.h"
#include "core/liveness/watch_wire.h"

namespace mcl {

using stranger_policy::kMaxUnprovenPerAddress;
using stranger_policy::kProofWindow;

std::string PeerWatch::address() const {
  return platform::localAddress(listener_.fd()).toString();
}

void PeerWatch::connectTo(int peer, const platform::SocketAddress& where,
                          platform::Deadline deadline) {
  // Again with a new connection when the peer's listener, busy with
  // strangers, dropped or stalled this one.
  auto attempt = std::chrono::duration_cast<platform::Clock::duration>(
      stranger_policy::kFirstAttempt);
  while (true) {
    const auto attemptDeadline =
        std::min(deadline, platform::Clock::now() + attempt);
    try {
      return connectOnce(peer, where, attemptDeadline);
    } catch (const platform::TimeoutError&) {
      attempt = std::min<platform::Clock::duration>(
          attempt * 2, stranger_policy::kLongestAttempt);
      if (platform::Clock::now() >= deadline) throw;
    } catch (const platform::ConnectionClosed&) {
      if (platform::Clock::now() >= deadline) throw;
    }
    peers_[size_t(peer)].socket.close();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void PeerWatch::connectOnce(int peer, const platform::SocketAddress& where,
                            platform::Deadline deadline) {
  Peer& p = peers_[size_t(peer)];
  p.socket = platform::connectTcp(where, deadline);
  watch_wire::Hello hello;
  hello.commId = commId_;
  hello.from = uint32_t(rank_);
  hello.to = uint32_t(peer);
  hello.nonce = randomNonce();
  const std::vector<uint8_t> bytes = watch_wire::encodeHello(hello);
  platform::sendAll(p.socket.fd(), bytes.data(), bytes.size(), deadline);
  // The peer proves the secret over our nonce and its own, then we do.
  Mac theirs{};
  Nonce theirNonce{};
  platform::recvAll(p.socket.fd(), theirs.data(), theirs.size(), deadline);
  platform::recvAll(p.socket.fd(), theirNonce.data(), theirNonce.size(),
                    deadline);
  const Mac expected =
      authMac(secret_, watch_wire::proofLabel("accept", commId_, rank_, peer),
              hello.nonce, theirNonce);
  if (!macEqual(theirs, expected))
    throw error(mclRemoteError,
                "%s: the side channel at %s (rank %d) does not know this "
                "job's secret",
                label_.c_str(), where.toString().c_str(), peer);
  const Mac mine =
      authMac(secret_, watch_wire::proofLabel("connect", commId_, rank_, peer),
              theirNonce, hello.nonce);
  platform::sendAll(p.socket.fd(), mine.data(), mine.size(), deadline);
  p.keys = deriveSessionKeys(
      secret_, watch_wire::proofLabel("session", commId_, rank_, peer),
      theirNonce, hello.nonce, true);
}

// A connection to the side channel still proving itself.
struct PeerWatch::Knock {
  platform::Socket socket;
  std::string host;
  platform::Clock::time_point accepted;
  std::vector<uint8_t> inbox;
  bool helloTaken = false;  // then we proved ourselves; its proof is next
  int from = -1;
  Nonce theirNonce{};
  Nonce mine{};
};

// Reads what k's next message still lacks; false when k is done for (it
// closed, sent something wrong, or failed to prove the secret). Moves a
// proven socket to its peer's place.
bool PeerWatch::serveKnock(Knock& k) {
  const size_t want = k.helloTaken ? sizeof(Mac) : watch_wire::kHelloBytes;
  uint8_t buf[watch_wire::kHelloBytes];
  const ssize_t n = recv(k.socket.fd(), buf, want - k.inbox.size(), 0);
  if (n == 0) return false;
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  k.inbox.insert(k.inbox.end(), buf, buf + n);
  if (k.inbox.size() < want) return true;
  const auto quick = platform::Clock::now() + std::chrono::milliseconds(100);
  if (!k.helloTaken) {
    const watch_wire::Hello h = watch_wire::decodeHello(k.inbox);
    k.from = int(h.from);
    if (h.magic != watch_wire::kHelloMagic || h.commId != commId_ ||
        h.to != uint32_t(rank_) || k.from < 0 || k.from >= rank_ ||
        peers_[size_t(k.from)].socket.valid())
      return false;  // a stranger, or a connection of another job
    k.theirNonce = h.nonce;
    k.mine = randomNonce();
    const Mac proof = authMac(
        secret_, watch_wire::proofLabel("accept", commId_, k.from, rank_),
        h.nonce, k.mine);
    platform::sendAll(k.socket.fd(), proof.data(), proof.size(), quick);
    platform::sendAll(k.socket.fd(), k.mine.data(), k.mine.size(), quick);
    k.helloTaken = true;
    k.inbox.clear();
    return true;
  }
  Mac theirs{};
  std::copy(k.inbox.begin(), k.inbox.end(), theirs.begin());
  if (!macEqual(theirs, authMac(secret_,
                                watch_wire::proofLabel("connect", commId_,
                                                       k.from, rank_),
                                k.mine, k.theirNonce)))
    return false;
  Peer& p = peers_[size_t(k.from)];
  {
    // sendToAll (a farewell from a failing init) may read it meanwhile.
    std::lock_guard<std::mutex> lock(sendMutex_);
    p.keys = deriveSessionKeys(
        secret_, watch_wire::proofLabel("session", commId_, k.from, rank_),
        k.mine, k.theirNonce, false);
    p.socket = std::move(k.socket);
  }
  lowerRanksWaiting_.fetch_sub(1);
  return false;  // served: no longer a knock
}

void PeerWatch::acceptFromLowerRanks() {
  std::vector<std::unique_ptr<Knock>> knocks;
  while (lowerRanksWaiting_.load() > 0 && !stopping_.load()) {
    std::vector<pollfd> fds = {{wakeRead_, POLLIN, 0},
                               {listener_.fd(), POLLIN, 0}};
    for (const auto& k : knocks) fds.push_back({k->socket.fd(), POLLIN, 0});
    if (poll(fds.data(), fds.size(), 50) < 0 && errno != EINTR) {
      acceptFailure_ =
          std::string("poll failed on the side channel: ") + strerror(errno);
      break;
    }
    // Connections already here first (a peer's proof among them).
    for (size_t i = 0; i < knocks.size(); ++i) {
      if (fds[2 + i].revents == 0) continue;
      bool keep = false;
      try {
        keep = serveKnock(*knocks[i]);
      } catch (const std::exception&) {
        // A stranger that went quiet or away: drop it, keep listening.
      }
      if (!keep) knocks[i]->socket.close();
    }
    if ((fds[1].revents & POLLIN) != 0) acceptKnocks(knocks);
    const auto now = platform::Clock::now();
    std::erase_if(knocks, [&](const auto& k) {
      return !k->socket.valid() || now - k->accepted > kProofWindow;
    });
  }
  char done = 1;
  (void)!write(acceptedWrite_, &done, 1);
}

void PeerWatch::awaitLowerRanks(platform::Deadline deadline, int rendezvousFd,
                                const std::function<void()>& whenReadable) {
  while (true) {
    const int ms = platform::pollTimeoutMs(deadline);
    pollfd fds[2] = {{acceptedRead_, POLLIN, 0}, {rendezvousFd, POLLIN, 0}};
    if (ms > 0 && poll(fds, rendezvousFd >= 0 ? 2 : 1, std::min(ms, 50)) < 0 &&
        errno != EINTR)
      throw error(mclSystemError, "%s: poll failed on the side channel",
                  label_.c_str());
    if ((fds[0].revents & POLLIN) != 0) break;
    // A rank that failed init: the root says why.
    if (rendezvousFd >= 0 && fds[1].revents != 0 && whenReadable)
      whenReadable();
    if (ms == 0)
      throw error(mclTimeout,
                  "%s: %d lower rank(s) never opened the side channel to "
                  "this rank (MCL_TIMEOUT)",
                  label_.c_str(), lowerRanksWaiting_.load());
  }
  acceptor_.join();
  if (!acceptFailure_.empty())
    throw error(mclSystemError, "%s: %s", label_.c_str(),
                acceptFailure_.c_str());
}

void PeerWatch::acceptKnocks(std::vector<std::unique_ptr<Knock>>& knocks) {
  for (int accepted = 0; accepted < stranger_policy::kAcceptsPerRound;
       ++accepted) {
    platform::Socket s;
    try {
      s = platform::acceptConnection(listener_.fd());
    } catch (const std::system_error&) {
      return;  // out of descriptors: the rest stay queued
    }
    if (!s.valid()) return;
    auto k = std::make_unique<Knock>();
    k->host = platform::peerAddress(s.fd()).host();
    k->socket = std::move(s);
    k->accepted = platform::Clock::now();
    // Past the limit for its address, the oldest of them goes.
    Knock* oldest = nullptr;
    size_t fromHost = 0;
    for (auto& other : knocks)
      if (other->socket.valid() && other->host == k->host) {
        ++fromHost;
        if (oldest == nullptr || other->accepted < oldest->accepted)
          oldest = other.get();
      }
    if (fromHost >= kMaxUnprovenPerAddress) oldest->socket.close();
    knocks.push_back(std::move(k));
  }
}

void PeerWatch::connect(const std::vector<std::string>& all,
                        platform::Deadline deadline, int rendezvousFd,
                        const std::function<void()>& whenReadable) {
  // Lower ranks connect to higher ones: the highest only accepts, so every
  // rank's connects are answered once the ranks above it are done.
  for (int peer = rank_ + 1; peer < nranks_; ++peer) {
    const std::string& text = all[size_t(peer)];
    const size_t colon = text.rfind(':');
    try {
      std::string host = text.substr(0, colon);
      if (host.size() > 2 && host.front() == '[')
        host = host.substr(1, host.size() - 2);
      connectTo(peer,
                platform::SocketAddress::fromNumeric(
                    host, std::stoi(text.substr(colon + 1))),
                deadline);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw error(mclSystemError,
                  "%s: cannot open the side channel to rank %d at %s: %s",
                  label_.c_str(), peer, text.c_str(), e.what());
    }
  }
  awaitLowerRanks(deadline, rendezvousFd, whenReadable);
  listener_.close();  // nobody else may join
  const int64_t now = watchNowNs();
  for (int peer = 0; peer < nranks_; ++peer)
    peers_[size_t(peer)].lastHeardNs.store(now);
  thread_ = std::thread([this] { run(); });
}

}  // namespace mcl
