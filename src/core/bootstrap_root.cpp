#include "core/bootstrap_root.h"

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
#include "core/bootstrap_protocol.h"
#include "core/params.h"

namespace mcl {

namespace {

using platform::Clock;
using platform::Deadline;

using stranger_policy::kAcceptsPerRound;
using stranger_policy::kMaxUnprovenPerAddress;
using stranger_policy::kProofWindow;
// Strangers get only as many buffered bytes as the next legitimate message
// can have.
constexpr size_t kMaxProofBytes = 8 + sizeof(Nonce) + sizeof(Mac);
constexpr size_t kMaxHelloBytes = 8 + 4 + 4096 + kSealOverhead;
constexpr auto kSendWindow = std::chrono::seconds(5);
constexpr auto kGiveUpMargin = std::chrono::milliseconds(300);
constexpr int kPollMs = 20;

// The registries below are never destroyed: root threads are detached and
// may still run while the process exits and runs static destructors.

// A process forked after mclGetUniqueId (the usual way to start local
// ranks) must not keep the root's port open: its copy of the listening
// socket would accept connections nobody serves. Children close them.
std::mutex& rootFdsMutex = *new std::mutex;
std::set<int>& rootFds = *new std::set<int>;

void registerRootFd(int fd) {
  static std::once_flag once;
  std::call_once(once, [] {
    pthread_atfork([] { rootFdsMutex.lock(); }, [] { rootFdsMutex.unlock(); },
                   [] {
                     for (int open : rootFds) close(open);
                     rootFds.clear();
                     rootFdsMutex.unlock();
                   });
  });
  std::lock_guard<std::mutex> lock(rootFdsMutex);
  rootFds.insert(fd);
}

void unregisterRootFd(int fd) {
  std::lock_guard<std::mutex> lock(rootFdsMutex);
  rootFds.erase(fd);
}

// Roots of this process by the comm they served, and whether they are done:
// a rank in the root's own process waits for its root before init returns,
// or a fast rank 0 could exit (taking the detached root thread with it)
// before the root has sent the last message to every other rank.
std::mutex& rootsMutex = *new std::mutex;
std::condition_variable& rootsChanged = *new std::condition_variable;
std::map<uint64_t, bool>& rootFinished =
    *new std::map<uint64_t, bool>;  // commId -> finished

void setRootState(uint64_t commId, bool finished) {
  static std::once_flag once;
  std::call_once(once, [] {
    // A forked child has no root thread: it must not wait for one.
    pthread_atfork([] { rootsMutex.lock(); }, [] { rootsMutex.unlock(); },
                   [] {
                     rootFinished.clear();
                     rootsMutex.unlock();
                   });
  });
  {
    std::lock_guard<std::mutex> lock(rootsMutex);
    rootFinished[commId] = finished;
  }
  rootsChanged.notify_all();
}

enum class State { AwaitProof, AwaitHello, Joined, Done };

struct Client {
  platform::Socket socket;
  std::string address;
  std::string host;  // the address without its port: per-address limits
  State state = State::AwaitProof;
  Nonce nonce{};
  Deadline accepted;
  Deadline authDeadline;
  std::unique_ptr<Sealer> sealer;  // once the proof is checked
  std::unique_ptr<Opener> opener;
  std::vector<uint8_t> inbox;
  Hello hello;
  bool hasContribution = false;
  std::vector<uint8_t> contribution;
};

class Root {
 public:
  Root(std::vector<platform::Socket> listeners, const Secret& secret,
       int timeoutSeconds, std::function<void()> whenClosed)
      : listeners_(std::move(listeners)),
        secret_(secret),
        whenClosed_(std::move(whenClosed)),
        deadline_(Clock::now() + std::chrono::seconds(timeoutSeconds)) {}

  void run() {
    try {
      loop();
    } catch (const std::exception& e) {
      MCL_LOG(Warn, kLogBootstrap, "rendezvous root stopped: %s", e.what());
      failAll(mclInternalError,
              std::string("rendezvous root failed: ") + e.what());
    }
    if (strangersDropped_ > 0)
      MCL_LOG(Warn, kLogBootstrap,
              "rendezvous: dropped %zu connections that did not prove the "
              "secret within %lld ms (strangers, or ranks that connected "
              "again)",
              strangersDropped_,
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(
                      kProofWindow)
                      .count()));
    MCL_LOG(Info, kLogBootstrap, "rendezvous root closed");
    if (commId_ != 0) setRootState(commId_, true);
    for (auto& l : listeners_) {
      unregisterRootFd(l.fd());
      l.close();
    }
    if (whenClosed_) whenClosed_();
  }

 private:
  void loop() {
    while (!finished_) {
      if (Clock::now() >= deadline_) {
        failAll(mclTimeout, timeoutMessage());
        return;
      }
      std::vector<pollfd> fds;
      for (auto& l : listeners_) fds.push_back({l.fd(), POLLIN, 0});
      const size_t first = fds.size();
      for (auto& c : clients_) fds.push_back({c->socket.fd(), POLLIN, 0});
      int n = poll(fds.data(), fds.size(), kPollMs);
      if (n < 0 && errno != EINTR)
        throw std::runtime_error("poll failed in the rendezvous root");
      // Connections already here first (a rank's proof among them), then
      // a bounded number of new ones: a flood of connections cannot keep
      // the root from reading.
      for (size_t i = first; i < fds.size() && !finished_; ++i)
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR))
          readClient(*clients_[i - first]);
      for (size_t i = 0; i < first && !finished_; ++i)
        if (fds[i].revents & POLLIN) acceptSome(listeners_[i].fd());
      dropExpired();
      std::erase_if(clients_, [](const auto& c) { return !c->socket.valid(); });
    }
  }

  std::string timeoutMessage() const {
    std::string missing;
    int joined = 0;
    std::vector<bool> present(static_cast<size_t>(std::max(nranks_, 0)));
    for (const auto& c : clients_)
      if (c->state == State::Joined || c->state == State::Done) {
        ++joined;
        present[static_cast<size_t>(c->hello.rank)] = true;
      }
    for (int r = 0; r < nranks_ && missing.size() < 200; ++r)
      if (!present[static_cast<size_t>(r)])
        missing += (missing.empty() ? "" : ",") + std::to_string(r);
    if (nranks_ == 0) return "no rank joined the rendezvous within the timeout";
    return "rendezvous timed out: " + std::to_string(joined) + " of " +
           std::to_string(nranks_) + " ranks joined; missing ranks " + missing;
  }

  static size_t inboxLimit(const Client& c) {
    switch (c.state) {
      case State::AwaitProof:
        return kMaxProofBytes;
      case State::AwaitHello:
        return kMaxHelloBytes;
      default:
        return kMaxFrameBytes + 64;
    }
  }

  // Makes room for a new connection from host: its oldest connection that
  // has not proven the secret goes when host has too many.
  void limitUnproven(const std::string& host) {
    Client* oldest = nullptr;
    size_t unproven = 0;
    for (auto& c : clients_)
      if (c->socket.valid() && c->state == State::AwaitProof &&
          c->host == host) {
        ++unproven;
        if (oldest == nullptr || c->accepted < oldest->accepted)
          oldest = c.get();
      }
    if (unproven >= kMaxUnprovenPerAddress) dropStranger(*oldest);
  }

  // The oldest connection still to prove itself, to free a descriptor.
  bool dropOldestStranger() {
    Client* oldest = nullptr;
    for (auto& c : clients_)
      if (c->socket.valid() && c->state == State::AwaitProof &&
          (oldest == nullptr || c->accepted < oldest->accepted))
        oldest = c.get();
    if (oldest == nullptr) return false;
    dropStranger(*oldest);
    return true;
  }

  void dropStranger(Client& c) {
    ++strangersDropped_;
    MCL_LOG(Info, kLogBootstrap,
            "rendezvous: dropped %s: it did not prove the secret in time",
            c.address.c_str());
    c.socket.close();
  }

  void acceptSome(int listenFd) {
    for (int accepted = 0; accepted < kAcceptsPerRound; ++accepted) {
      platform::Socket s;
      try {
        s = platform::acceptConnection(listenFd);
      } catch (const std::system_error& e) {
        // Out of descriptors or memory: a flood must not end the
        // rendezvous. The oldest stranger makes room; without one, the
        // rest stay queued until later.
        if (dropOldestStranger()) continue;
        MCL_LOG(Warn, kLogBootstrap, "rendezvous: accept failed: %s", e.what());
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return;
      }
      if (!s.valid()) return;
      auto c = std::make_unique<Client>();
      const platform::SocketAddress peer = platform::peerAddress(s.fd());
      c->address = peer.toString();
      c->host = peer.host();
      limitUnproven(c->host);
      c->socket = std::move(s);
      c->nonce = randomNonce();
      c->accepted = Clock::now();
      c->authDeadline = c->accepted + kProofWindow;
      try {
        sendFrame(c->socket.fd(), FrameType::Challenge,
                  std::vector<uint8_t>(c->nonce.begin(), c->nonce.end()),
                  Clock::now() + std::chrono::milliseconds(100));
      } catch (const std::exception&) {
        continue;
      }
      clients_.push_back(std::move(c));
    }
  }

  void readClient(Client& c) {
    uint8_t buf[64 * 1024];
    bool closed = false;
    while (true) {
      ssize_t n = recv(c.socket.fd(), buf, sizeof(buf), 0);
      if (n > 0) {
        c.inbox.insert(c.inbox.end(), buf, buf + n);
        if (c.inbox.size() > inboxLimit(c)) {
          disconnect(c, "sent more than its next message can hold");
          return;
        }
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n < 0 && errno == EINTR) continue;
      closed = true;  // handle what arrived first: a Bye, then the close
      break;
    }
    processFrames(c);
    if (closed && c.socket.valid() && !finished_)
      disconnect(c, "closed the connection");
  }

  void processFrames(Client& c) {
    Frame f;
    try {
      while (c.socket.valid() && !finished_ && takeFrame(c.inbox, &f)) {
        // A Hello in the clear from a rank that proved the secret: an mcl
        // of bootstrap protocol 1, which sealed nothing. Its job fails
        // now, saying so, rather than at the timeout.
        if (c.state == State::AwaitHello && f.type == FrameType::Hello)
          return refuseUnsealedHello(c, f);
        if (c.state != State::AwaitProof)
          f = openSealedFrame(*c.opener, f, who(c));
        handle(c, f);
      }
    } catch (const Error& e) {
      if (c.state == State::AwaitProof || c.state == State::AwaitHello) {
        MCL_LOG(Warn, kLogBootstrap,
                "rendezvous: dropped connection from %s: %s", c.address.c_str(),
                e.what());
        c.socket.close();
      } else {
        failAll(e.code(), std::string("rank ") + std::to_string(c.hello.rank) +
                              ": " + e.what());
      }
    }
  }

  void refuseUnsealedHello(Client& c, const Frame& f) {
    std::string rank = "a rank at " + c.address;
    std::string protocol = "an older bootstrap protocol";
    try {
      const Hello h = decodeHello(f.payload);
      rank = "rank " + std::to_string(h.rank) + " (pid " +
             std::to_string(h.pid) + ", at " + c.address + ")";
      protocol = "bootstrap protocol " + std::to_string(h.protocol);
    } catch (const Error&) {
      // Said without its rank: the message is still the news.
    }
    const std::string message =
        rank + " speaks " + protocol +
        " (an mcl from before the "
        "rendezvous was sealed), this root speaks " +
        std::to_string(kBootstrapProtocol) +
        ": mixed mcl versions, install the same one on every host";
    // That rank reads only frames in the clear: it is told in its own
    // protocol (the message holds nothing secret).
    try {
      sendFrame(c.socket.fd(), FrameType::Failure,
                encode(Failure{mclInvalidUsage, message}),
                Clock::now() + kSendWindow);
    } catch (const std::exception&) {
    }
    c.socket.close();
    failAll(mclInvalidUsage, message);
  }

  static std::string who(const Client& c) {
    if (c.state == State::AwaitHello) return c.address;
    return "rank " + std::to_string(c.hello.rank) + " at " + c.address;
  }

  void send(Client& c, FrameType type, const std::vector<uint8_t>& payload) {
    sendSealedFrame(c.socket.fd(), *c.sealer, type, payload,
                    Clock::now() + kSendWindow);
  }

  void handle(Client& c, const Frame& f) {
    switch (c.state) {
      case State::AwaitProof:
        return handleProof(c, f);
      case State::AwaitHello:
        return handleHello(c, f);
      case State::Joined:
        return handleJoined(c, f);
      case State::Done:
        throw error(mclRemoteError, "sent %s after Bye", frameTypeName(f.type));
    }
  }

  void handleProof(Client& c, const Frame& f) {
    if (f.type != FrameType::AuthProof)
      throw error(mclRemoteError, "sent %s before proving the secret",
                  frameTypeName(f.type));
    AuthProof proof = decodeAuthProof(f.payload);
    if (!macEqual(proof.mac,
                  authMac(secret_, "mcl-client", c.nonce, proof.nonce))) {
      MCL_LOG(Warn, kLogBootstrap,
              "rendezvous: rejected a connection from %s: it does not know "
              "the secret of this unique id",
              c.address.c_str());
      // Nothing but the fact: this process has not proven itself to the
      // rank, so any text from it would be a stranger's to choose.
      try {
        sendFrame(c.socket.fd(), FrameType::Rejected, {},
                  Clock::now() + std::chrono::milliseconds(100));
      } catch (const std::exception&) {
      }
      c.socket.close();
      return;
    }
    Mac reply = authMac(secret_, "mcl-server", proof.nonce, c.nonce);
    sendFrame(c.socket.fd(), FrameType::AuthOk,
              std::vector<uint8_t>(reply.begin(), reply.end()),
              Clock::now() + kSendWindow);
    const SessionKeys keys =
        rendezvousKeys(secret_, c.nonce, proof.nonce, /*weAreTheRank=*/false);
    c.sealer = std::make_unique<Sealer>(keys.send);
    c.opener = std::make_unique<Opener>(keys.receive);
    c.state = State::AwaitHello;
    // Proven: it has until the Hello is due, no longer a stranger's window.
    c.authDeadline = Clock::now() + kSendWindow;
  }

  void handleHello(Client& c, const Frame& f) {
    if (f.type != FrameType::Hello)
      throw error(mclRemoteError, "sent %s instead of Hello",
                  frameTypeName(f.type));
    Hello h = decodeHello(f.payload);
    if (h.protocol != kBootstrapProtocol)
      return failAll(
          mclInvalidUsage,
          "rank " + std::to_string(h.rank) + " (pid " + std::to_string(h.pid) +
              ") speaks bootstrap protocol " + std::to_string(h.protocol) +
              ", this root speaks " + std::to_string(kBootstrapProtocol) +
              ": mixed mcl versions");
    if (nranks_ == 0) {
      nranks_ = h.nranks;
      firstRank_ = h.rank;
      ranks_.assign(static_cast<size_t>(nranks_), nullptr);
    } else if (h.nranks != nranks_) {
      return failAll(mclInvalidUsage, "ranks disagree on nranks: rank " +
                                          std::to_string(h.rank) + " says " +
                                          std::to_string(h.nranks) + ", rank " +
                                          std::to_string(firstRank_) +
                                          " says " + std::to_string(nranks_));
    }
    if (h.rank < 0 || h.rank >= nranks_)
      return failAll(mclInvalidArgument, "a process joined as rank " +
                                             std::to_string(h.rank) + " of " +
                                             std::to_string(nranks_));
    Client*& slot = ranks_[static_cast<size_t>(h.rank)];
    if (slot != nullptr)
      return failAll(mclInvalidUsage,
                     "two processes claim rank " + std::to_string(h.rank) +
                         " (pids " + std::to_string(slot->hello.pid) + " and " +
                         std::to_string(h.pid) + ")");
    c.hello = h;
    c.state = State::Joined;
    // Give up, naming who is missing, a little before this rank would give
    // up on its own knowing less.
    if (joined_ + 1 < nranks_ && h.timeoutMs > 0) {
      auto own =
          Clock::now() + std::chrono::milliseconds(h.timeoutMs) - kGiveUpMargin;
      deadline_ = std::min(deadline_, own);
    }
    slot = &c;
    ++joined_;
    MCL_LOG(Info, kLogBootstrap, "rendezvous: rank %d of %d joined from %s",
            h.rank, nranks_, c.address.c_str());
    if (joined_ == nranks_) welcomeAll();
  }

  void welcomeAll() {
    Welcome w;
    w.commId = randomU64();
    commId_ = w.commId;
    setRootState(commId_, false);
    for (Client* c : ranks_)
      w.peers.push_back({c->hello.hostId, c->hello.hostName, c->hello.pid,
                         c->hello.shmFreeBytes});
    std::vector<uint8_t> payload = encode(w);
    for (Client* c : ranks_) send(*c, FrameType::Welcome, payload);
  }

  void handleJoined(Client& c, const Frame& f) {
    if (f.type == FrameType::Bye) {
      c.state = State::Done;
      if (++done_ == nranks_) finished_ = true;
      return;
    }
    if (f.type == FrameType::Failure) return relayFailure(c, f);
    if (f.type != FrameType::AllGather)
      throw error(mclRemoteError, "sent %s during init", frameTypeName(f.type));
    if (joined_ != nranks_ || c.hasContribution)
      throw error(mclRemoteError, "sent an all-gather out of turn");
    AllGatherMessage m = decodeAllGather(f.payload);
    if (m.round != round_ || m.parts.size() != 1)
      throw error(mclRemoteError, "all-gather round %u, expected %u", m.round,
                  round_);
    c.contribution = std::move(m.parts[0]);
    c.hasContribution = true;
    if (++contributions_ < nranks_) return;
    AllGatherMessage result;
    result.round = round_;
    for (Client* r : ranks_) {
      result.parts.push_back(std::move(r->contribution));
      r->hasContribution = false;
    }
    std::vector<uint8_t> payload = encode(result);
    for (Client* r : ranks_)
      if (r->socket.valid()) send(*r, FrameType::AllGatherResult, payload);
    contributions_ = 0;
    ++round_;
  }

  // A rank whose init failed says why before it leaves: every rank then
  // fails with that reason, not with "rank r closed the connection".
  void relayFailure(Client& c, const Frame& f) {
    Failure failure = decodeFailure(f.payload);
    failure.code = failureResult(failure.code);
    const std::string prefix = "rank " + std::to_string(c.hello.rank) + ": ";
    if (failure.message.compare(0, prefix.size(), prefix) != 0)
      failure.message = prefix + failure.message;
    failAll(failure.code, failure.message);
  }

  void disconnect(Client& c, const char* why) {
    if (c.state == State::Joined && !finished_) {
      failAll(mclRemoteError, "rank " + std::to_string(c.hello.rank) +
                                  " (pid " + std::to_string(c.hello.pid) +
                                  ") " + why + " during init");
      return;
    }
    c.socket.close();
  }

  void dropExpired() {
    Deadline now = Clock::now();
    for (auto& c : clients_)
      if (c->socket.valid() &&
          (c->state == State::AwaitProof || c->state == State::AwaitHello) &&
          now > c->authDeadline)
        dropStranger(*c);
  }

  // Tells every joined rank why init failed, then ends the root.
  void failAll(int code, const std::string& message) {
    MCL_LOG(Warn, kLogBootstrap, "rendezvous failed: %s", message.c_str());
    std::vector<uint8_t> payload = encode(Failure{code, message});
    for (auto& c : clients_) {
      if (!c->socket.valid() || c->state == State::AwaitProof) continue;
      try {
        send(*c, FrameType::Failure, payload);
      } catch (const std::exception&) {
      }
      c->socket.close();
    }
    finished_ = true;
  }

  std::vector<platform::Socket> listeners_;
  Secret secret_;
  std::function<void()> whenClosed_;
  Deadline deadline_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::vector<Client*> ranks_;
  int nranks_ = 0;
  int firstRank_ = -1;
  int joined_ = 0;
  int done_ = 0;
  uint64_t commId_ = 0;
  int contributions_ = 0;
  uint32_t round_ = 0;
  bool finished_ = false;
  size_t strangersDropped_ = 0;
};

}  // namespace

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
    registerRootFd(s.fd());
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
  auto root = std::make_shared<Root>(std::move(listeners), secret,
                                     timeoutSeconds, std::move(whenClosed));
  std::thread([root] { root->run(); }).detach();
  return bound;
}

void waitForRendezvousRoot(uint64_t commId, platform::Deadline deadline) {
  std::unique_lock<std::mutex> lock(rootsMutex);
  if (rootFinished.find(commId) == rootFinished.end())
    return;  // the root runs elsewhere
  // Several ranks of one process may wait; the first one out forgets the
  // entry, which the others must read as "finished".
  rootsChanged.wait_until(lock, deadline, [&] {
    auto it = rootFinished.find(commId);
    return it == rootFinished.end() || it->second;
  });
  rootFinished.erase(commId);
}

}  // namespace mcl
