#include "transports/tcp/tcp_listener.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "base/stranger_policy.h"

namespace mcl::transport::tcp {

namespace {

using platform::Clock;
using stranger_policy::kAcceptsPerRound;
using stranger_policy::kMaxUnprovenPerAddress;
using stranger_policy::kProofWindow;

}  // namespace

struct TcpListener::Pending {
  platform::Socket socket;
  std::string address;
  std::string host;  // without the port: per-address limits
  Nonce nonce{};
  Clock::time_point accepted;
  Clock::time_point deadline;
  bool proven = false;
  SessionKeys keys;  // once proven
  std::vector<uint8_t> inbox;
};

namespace {

// The oldest connection still to prove itself (from host, or any when
// host is null), or null.
template <class List>
auto* oldestUnproven(List& pending, const std::string* host,
                     size_t* count = nullptr) {
  decltype(pending.front().get()) oldest = nullptr;
  for (auto& p : pending)
    if (p->socket.valid() && !p->proven &&
        (host == nullptr || p->host == *host)) {
      if (count != nullptr) ++*count;
      if (oldest == nullptr || p->accepted < oldest->accepted) oldest = p.get();
    }
  return oldest;
}

}  // namespace

TcpListener::TcpListener(std::vector<platform::Socket> listeners,
                         const Secret& secret, uint64_t commId, int rank)
    : listeners_(std::move(listeners)),
      secret_(secret),
      commId_(commId),
      rank_(rank) {
  platform::openWakePipe(&wakeRead_, &wakeWrite_);
  thread_ = std::thread([this] { run(); });
}

TcpListener::~TcpListener() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  char byte = 0;
  if (write(wakeWrite_, &byte, 1) < 0) {
    // The thread also polls with a timeout; it will see stop_.
  }
  thread_.join();
  close(wakeRead_);
  close(wakeWrite_);
}

ProvenSocket TcpListener::take(const StreamKey& key,
                               platform::Deadline deadline,
                               const std::function<void()>& betweenSlices) {
  constexpr auto kSlice = std::chrono::milliseconds(50);
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    auto it = ready_.find(key);
    if (it != ready_.end()) {
      ProvenSocket s = std::move(it->second);
      ready_.erase(it);
      return s;
    }
    if (betweenSlices) {
      lock.unlock();
      betweenSlices();
      lock.lock();
      if (ready_.find(key) != ready_.end()) continue;
    }
    const auto until = std::min(deadline, Clock::now() + kSlice);
    if (arrived_.wait_until(lock, until) == std::cv_status::timeout &&
        Clock::now() >= deadline && ready_.find(key) == ready_.end())
      throw error(mclTimeout,
                  "rank %d: rank %d did not open its TCP connection "
                  "(channel %u, link %u, socket %u) within the timeout",
                  rank_, key.rank, key.channel, key.link, key.stripe);
  }
}

std::optional<ProvenSocket> TcpListener::takeArrived(
    const std::vector<StreamKey>& keys, StreamKey* which) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const StreamKey& key : keys)
    if (auto it = ready_.find(key); it != ready_.end()) {
      *which = key;
      ProvenSocket s = std::move(it->second);
      ready_.erase(it);
      return s;
    }
  return std::nullopt;
}

void TcpListener::run() {
  std::vector<std::unique_ptr<Pending>> pending;
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) return;
    }
    std::vector<pollfd> fds;
    fds.push_back({wakeRead_, POLLIN, 0});
    for (auto& l : listeners_) fds.push_back({l.fd(), POLLIN, 0});
    for (auto& p : pending) fds.push_back({p->socket.fd(), POLLIN, 0});
    poll(fds.data(), fds.size(), 50);
    // Handshakes in progress first: read exactly what the next message
    // holds.
    for (auto& p : pending) {
      size_t want = p->proven ? kHelloBytes : kProofBytes;
      uint8_t buf[kProofBytes];
      ssize_t n = recv(p->socket.fd(), buf, want - p->inbox.size(), 0);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
                     errno != EINTR)) {
        p->socket.close();
        continue;
      }
      if (n > 0) p->inbox.insert(p->inbox.end(), buf, buf + n);
      if (p->inbox.size() < want) continue;
      if (!p->proven) {
        Nonce client;
        Mac mac;
        std::copy(p->inbox.begin(), p->inbox.begin() + 32, client.begin());
        std::copy(p->inbox.begin() + 32, p->inbox.end(), mac.begin());
        if (!macEqual(mac, clientMac(secret_, p->nonce, client))) {
          MCL_LOG(Warn, kLogInit,
                  "rank %d: rejected a TCP connection from %s: it does not "
                  "know the communicator's secret",
                  rank_, p->address.c_str());
          p->socket.close();
          continue;
        }
        Mac answer = serverMac(secret_, p->nonce, client);
        try {
          platform::sendAll(p->socket.fd(), answer.data(), answer.size(),
                            Clock::now() + std::chrono::seconds(1));
        } catch (const std::exception&) {
          p->socket.close();
          continue;
        }
        p->proven = true;
        p->keys = streamKeys(secret_, commId_, p->nonce, client, false);
        p->inbox.clear();
        // Proven: the stream's hello follows at once; a slow peer keeps
        // its place longer than a stranger would.
        p->deadline = Clock::now() + std::chrono::seconds(5);
        continue;
      }
      StreamKey key;
      if (!decodeHello(p->keys, p->inbox.data(), commId_, &key)) {
        p->socket.close();
        continue;
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ready_[key] = ProvenSocket{std::move(p->socket), p->keys};
      }
      arrived_.notify_all();
    }
    // Then new connections, a bounded number, each challenged at once.
    for (size_t i = 0; i < listeners_.size(); ++i) {
      if ((fds[1 + i].revents & POLLIN) == 0) continue;
      for (int accepted = 0; accepted < kAcceptsPerRound; ++accepted) {
        platform::Socket s;
        try {
          s = platform::acceptConnection(listeners_[i].fd());
        } catch (const std::system_error&) {
          // Out of descriptors: the oldest stranger makes room, else the
          // rest stay queued.
          if (auto* oldest = oldestUnproven(pending, nullptr)) {
            oldest->socket.close();
            continue;
          }
          break;
        }
        if (!s.valid()) break;
        auto p = std::make_unique<Pending>();
        const platform::SocketAddress peer = platform::peerAddress(s.fd());
        p->address = peer.toString();
        p->host = peer.host();
        size_t fromHost = 0;
        auto* oldest = oldestUnproven(pending, &p->host, &fromHost);
        if (fromHost >= kMaxUnprovenPerAddress) oldest->socket.close();
        p->socket = std::move(s);
        p->nonce = randomNonce();
        p->accepted = Clock::now();
        p->deadline = p->accepted + kProofWindow;
        try {
          platform::sendAll(p->socket.fd(), p->nonce.data(), p->nonce.size(),
                            Clock::now() + std::chrono::seconds(1));
        } catch (const std::exception&) {
          continue;
        }
        pending.push_back(std::move(p));
      }
    }
    auto now = Clock::now();
    std::erase_if(pending, [&](const auto& p) {
      return !p->socket.valid() || now > p->deadline;
    });
  }
}

}  // namespace mcl::transport::tcp
