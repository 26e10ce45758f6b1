#include "core/peer_watch.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "base/port_range.h"
#include "base/sealed_channel.h"
#include "base/session_keys.h"
#include "base/stranger_policy.h"
#include "base/wire.h"
#include "core/params.h"

namespace mcl {

namespace {

#if defined(MSG_NOSIGNAL)
constexpr int kNoSigpipe = MSG_NOSIGNAL;
#else
constexpr int kNoSigpipe = 0;  // SO_NOSIGPIPE is set on every socket instead
#endif

constexpr uint32_t kHelloMagic = 0x4d434c57;  // "MCLW"
constexpr char kBeat = 'B';
constexpr char kFarewell = 'F';
constexpr char kGaveUp = 'G';
constexpr char kGoodbye = 'L';  // as kGaveUp, from a rank that finished
constexpr size_t kMaxReasonBytes = 1024;
// A sealed frame: u32 length and u64 number, then the message and its tag.
constexpr size_t kFrameHeaderBytes = 12;
constexpr size_t kMaxSealedBytes = 3 + kMaxReasonBytes + kSealOverhead;
// A peer whose socket closed without a farewell is reported dead this
// long after, and one that said goodbye gone: frames it sent just before
// may still be on a link.
constexpr int64_t kDeathGraceNs = 100'000'000;
using stranger_policy::kMaxUnprovenPerAddress;
using stranger_policy::kProofWindow;

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             platform::Clock::now().time_since_epoch())
      .count();
}

// The label both proofs are bound to: this communicator and this pair, so
// a proof for one pair or job cannot be replayed for another.
std::string proofLabel(const char* role, uint64_t commId, int low, int high) {
  char text[96];
  snprintf(text, sizeof(text), "mcl-watch-%s %016" PRIx64 " %d %d", role,
           commId, low, high);
  return text;
}

struct WatchHello {
  uint32_t magic = kHelloMagic;
  uint64_t commId = 0;
  uint32_t from = 0;
  uint32_t to = 0;
  Nonce nonce{};
};
constexpr size_t kHelloBytes = 4 + 8 + 4 + 4 + 32;

std::vector<uint8_t> encodeWatchHello(const WatchHello& h) {
  WireWriter w;
  w.u32(h.magic);
  w.u64(h.commId);
  w.u32(h.from);
  w.u32(h.to);
  w.raw(h.nonce.data(), h.nonce.size());
  return w.take();
}

WatchHello decodeWatchHello(const std::vector<uint8_t>& bytes) {
  WireReader in(bytes.data(), bytes.size(), "side-channel hello");
  WatchHello h;
  h.magic = in.u32();
  h.commId = in.u64();
  h.from = in.u32();
  h.to = in.u32();
  in.raw(h.nonce.data(), h.nonce.size());
  in.finish();
  return h;
}

}  // namespace

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
  sendToAll(std::string(1, kFarewell));
  closePipes();
}

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
  WatchHello hello;
  hello.commId = commId_;
  hello.from = uint32_t(rank_);
  hello.to = uint32_t(peer);
  hello.nonce = randomNonce();
  const std::vector<uint8_t> bytes = encodeWatchHello(hello);
  platform::sendAll(p.socket.fd(), bytes.data(), bytes.size(), deadline);
  // The peer proves the secret over our nonce and its own, then we do.
  Mac theirs{};
  Nonce theirNonce{};
  platform::recvAll(p.socket.fd(), theirs.data(), theirs.size(), deadline);
  platform::recvAll(p.socket.fd(), theirNonce.data(), theirNonce.size(),
                    deadline);
  const Mac expected =
      authMac(secret_, proofLabel("accept", commId_, rank_, peer), hello.nonce,
              theirNonce);
  if (!macEqual(theirs, expected))
    throw error(mclRemoteError,
                "%s: the side channel at %s (rank %d) does not know this "
                "job's secret",
                label_.c_str(), where.toString().c_str(), peer);
  const Mac mine = authMac(secret_, proofLabel("connect", commId_, rank_, peer),
                           theirNonce, hello.nonce);
  platform::sendAll(p.socket.fd(), mine.data(), mine.size(), deadline);
  p.keys =
      deriveSessionKeys(secret_, proofLabel("session", commId_, rank_, peer),
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
  const size_t want = k.helloTaken ? sizeof(Mac) : kHelloBytes;
  uint8_t buf[kHelloBytes];
  const ssize_t n = recv(k.socket.fd(), buf, want - k.inbox.size(), 0);
  if (n == 0) return false;
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  k.inbox.insert(k.inbox.end(), buf, buf + n);
  if (k.inbox.size() < want) return true;
  const auto quick = platform::Clock::now() + std::chrono::milliseconds(100);
  if (!k.helloTaken) {
    const WatchHello h = decodeWatchHello(k.inbox);
    k.from = int(h.from);
    if (h.magic != kHelloMagic || h.commId != commId_ ||
        h.to != uint32_t(rank_) || k.from < 0 || k.from >= rank_ ||
        peers_[size_t(k.from)].socket.valid())
      return false;  // a stranger, or a connection of another job
    k.theirNonce = h.nonce;
    k.mine = randomNonce();
    const Mac proof = authMac(
        secret_, proofLabel("accept", commId_, k.from, rank_), h.nonce, k.mine);
    platform::sendAll(k.socket.fd(), proof.data(), proof.size(), quick);
    platform::sendAll(k.socket.fd(), k.mine.data(), k.mine.size(), quick);
    k.helloTaken = true;
    k.inbox.clear();
    return true;
  }
  Mac theirs{};
  std::copy(k.inbox.begin(), k.inbox.end(), theirs.begin());
  if (!macEqual(theirs,
                authMac(secret_, proofLabel("connect", commId_, k.from, rank_),
                        k.mine, k.theirNonce)))
    return false;
  Peer& p = peers_[size_t(k.from)];
  {
    // sendToAll (a farewell from a failing init) may read it meanwhile.
    std::lock_guard<std::mutex> lock(sendMutex_);
    p.keys = deriveSessionKeys(secret_,
                               proofLabel("session", commId_, k.from, rank_),
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
  const int64_t now = nowNs();
  for (int peer = 0; peer < nranks_; ++peer)
    peers_[size_t(peer)].lastHeardNs.store(now);
  thread_ = std::thread([this] { run(); });
}

void PeerWatch::sendToAll(const std::string& message) {
  std::lock_guard<std::mutex> lock(sendMutex_);
  const std::vector<uint8_t> plain(message.begin(), message.end());
  for (int peer = 0; peer < nranks_; ++peer) {
    Peer& p = peers_[size_t(peer)];
    if (!p.socket.valid() || p.muted) continue;
    // Sealed for this peer: u32 length and u64 number in the clear (and
    // authenticated), then the message.
    const uint64_t number = ++p.sent;
    WireWriter header;
    header.u32(static_cast<uint32_t>(plain.size() + kSealOverhead));
    header.u64(number);
    const std::vector<uint8_t> sealed = sealNumbered(
        p.keys.send, number, plain, header.bytes().data(), kFrameHeaderBytes);
    std::vector<uint8_t> frame = header.take();
    frame.insert(frame.end(), sealed.begin(), sealed.end());
    // Never blocks: a full buffer is a peer that does not read, which its
    // own silence will show (a message not sent at all is a gap in the
    // numbers, which the peer allows). A message cut short would garble
    // the rest of the stream: that peer hears nothing more.
    const ssize_t n = send(p.socket.fd(), frame.data(), frame.size(),
                           MSG_DONTWAIT | kNoSigpipe);
    if (n >= 0 && size_t(n) < frame.size()) p.muted = true;
  }
}

void PeerWatch::sayFarewell(const std::string& reason) {
  sendReason(kGaveUp, reason);
}

void PeerWatch::sayGoodbye(const std::string& reason) {
  sendReason(kGoodbye, reason);
}

void PeerWatch::sendReason(char kind, const std::string& reason) {
  if (saidFarewell_.exchange(true)) return;
  const std::string text = reason.substr(0, kMaxReasonBytes);
  std::string message(1, kind);
  message += char(text.size() >> 8);
  message += char(text.size() & 0xff);
  sendToAll(message + text);
}

void PeerWatch::take(int peer, int64_t now) {
  Peer& p = peers_[size_t(peer)];
  size_t at = 0;
  while (p.inbox.size() - at >= kFrameHeaderBytes) {
    WireReader header(reinterpret_cast<const uint8_t*>(p.inbox.data()) + at,
                      kFrameHeaderBytes, "side-channel frame");
    const uint32_t length = header.u32();
    const uint64_t number = header.u64();
    if (length > kMaxSealedBytes || length < kSealOverhead) {
      distrust(p, "sent bytes that are not the side channel's");
      return;
    }
    if (p.inbox.size() - at - kFrameHeaderBytes < length) break;
    const auto* bytes = reinterpret_cast<const uint8_t*>(p.inbox.data()) + at;
    std::vector<uint8_t> plain;
    if (!openNumbered(p.keys.receive, number, &p.lastReceived,
                      std::vector<uint8_t>(bytes + kFrameHeaderBytes,
                                           bytes + kFrameHeaderBytes + length),
                      bytes, kFrameHeaderBytes, &plain)) {
      distrust(p,
               "sent a side-channel message that failed its integrity check "
               "(altered, replayed or forged on the way)");
      return;
    }
    at += kFrameHeaderBytes + length;
    if (!handle(p, std::string(plain.begin(), plain.end()), now)) {
      distrust(p, "sent bytes that are not the side channel's");
      return;
    }
  }
  p.inbox.erase(0, at);
}

bool PeerWatch::handle(Peer& p, const std::string& message, int64_t now) {
  if (message.empty()) return false;
  const char kind = message[0];
  if (kind == kBeat) return message.size() == 1;
  if (kind == kFarewell) {
    p.saidFarewell = true;
    return message.size() == 1;
  }
  if (kind != kGaveUp && kind != kGoodbye) return false;
  if (message.size() < 3) return false;
  const size_t length = size_t(uint8_t(message[1])) << 8 | uint8_t(message[2]);
  if (message.size() != 3 + length) return false;
  {
    std::lock_guard<std::mutex> lock(reasonMutex_);
    p.reason = message.substr(3, std::min(length, kMaxReasonBytes));
  }
  p.changedNs.store(now);
  p.finished.store(kind == kGoodbye);
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
      if (p.inbox.size() > kFrameHeaderBytes + kMaxSealedBytes + 4096)
        p.inbox.clear();
      take(peer, now);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
      return;
    // Closed (or reset): a farewell before it is a communicator destroyed,
    // none a process that died.
    const State s = p.saidFarewell ? State::Left : State::Died;
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

void PeerWatch::run() {
  const int64_t timeoutNs =
      std::chrono::duration_cast<std::chrono::nanoseconds>(peerTimeout_)
          .count();
  const int64_t beatNs = std::min<int64_t>(1'000'000'000, timeoutNs / 8);
  int64_t nextBeat = 0;
  std::vector<pollfd> fds;
  std::vector<int> who;
  while (!stopping_.load()) {
    int64_t now = nowNs();
    if (now >= nextBeat) {
      sendToAll(std::string(1, kBeat));
      nextBeat = now + beatNs;
    }
    fds.assign(1, pollfd{wakeRead_, POLLIN, 0});
    who.assign(1, -1);
    for (int peer = 0; peer < nranks_; ++peer)
      if (peers_[size_t(peer)].socket.valid()) {
        fds.push_back(pollfd{peers_[size_t(peer)].socket.fd(), POLLIN, 0});
        who.push_back(peer);
      }
    const int ms = int(std::max<int64_t>(1, (nextBeat - now) / 1'000'000));
    if (poll(fds.data(), fds.size(), ms) < 0 && errno != EINTR) return;
    now = nowNs();
    for (size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents != 0) readFrom(who[i], now);
    for (int peer = 0; peer < nranks_; ++peer) {
      Peer& p = peers_[size_t(peer)];
      if (peer == rank_ || p.state.load() != int(State::Alive)) continue;
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
}

std::string PeerWatch::problemWith(int peer) const {
  if (peer < 0 || peer >= nranks_ || peer == rank_) return "";
  const Peer& p = peers_[size_t(peer)];
  const auto state = State(p.state.load());
  if (state == State::Died && nowNs() - p.changedNs.load() >= kDeathGraceNs)
    return "rank " + std::to_string(peer) +
           "'s process died (its side channel closed without a farewell)";
  // A peer that destroyed its communicator told the side channel after
  // its last sends, which may still be on the way (a 2-rank all-reduce
  // whose last piece trails the goodbye): the news counts after the same
  // grace as a death. A peer that gave up is news at once.
  if (state == State::GaveUp &&
      (!p.finished.load() || nowNs() - p.changedNs.load() >= kDeathGraceNs)) {
    std::lock_guard<std::mutex> lock(reasonMutex_);
    return "peer rank " + std::to_string(peer) + " is gone (" + p.reason + ")";
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
