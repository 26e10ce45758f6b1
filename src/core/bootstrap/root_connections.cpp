// The rendezvous root's loop: accepting connections (a bounded number a
// round, so a flood cannot keep it from reading), reading them, sending,
// and ending, with every joined rank told why when init fails.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "base/stranger_policy.h"
#include "core/bootstrap/bootstrap_protocol.h"
#include "core/bootstrap/rendezvous_root.h"
#include "core/bootstrap/root_registry.h"

namespace mcl::rendezvous {

using stranger_policy::kAcceptsPerRound;
using stranger_policy::kProofWindow;

RendezvousRoot::RendezvousRoot(std::vector<platform::Socket> listeners,
                               const Secret& secret, int timeoutSeconds,
                               std::function<void()> whenClosed)
    : listeners_(std::move(listeners)),
      secret_(secret),
      whenClosed_(std::move(whenClosed)),
      deadline_(Clock::now() + std::chrono::seconds(timeoutSeconds)) {}

void RendezvousRoot::run() {
  try {
    loop();
  } catch (const std::exception& e) {
    MCL_LOG(Warn, kLogBootstrap, "rendezvous root stopped: %s", e.what());
    failAll(mclInternalError,
            std::string("rendezvous root failed: ") + e.what());
  }
  if (strangersDropped_ > 0)
    MCL_LOG(
        Warn, kLogBootstrap,
        "rendezvous: dropped %zu connections that did not prove the "
        "secret within %lld ms (strangers, or ranks that connected "
        "again)",
        strangersDropped_,
        static_cast<long long>(
            std::chrono::duration_cast<std::chrono::milliseconds>(kProofWindow)
                .count()));
  MCL_LOG(Info, kLogBootstrap, "rendezvous root closed");
  if (commId_ != 0) setRootState(commId_, true);
  for (auto& l : listeners_) {
    unregisterRootFd(l.fd());
    l.close();
  }
  if (whenClosed_) whenClosed_();
}

void RendezvousRoot::loop() {
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

std::string RendezvousRoot::timeoutMessage() const {
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
  if (joined < nranks_)
    return "rendezvous timed out: " + std::to_string(joined) + " of " +
           std::to_string(nranks_) + " ranks joined; missing ranks " + missing;
  // Every rank joined, and some did not reach the next step of init that
  // goes through here: name them, and the ones they keep waiting.
  std::string behind;
  std::string waiting;
  for (const auto& c : clients_) {
    if (c->state != State::Joined && c->state != State::Done) continue;
    std::string& list =
        c->state == State::Joined && !c->hasContribution ? behind : waiting;
    if (list.size() < 200)
      list += (list.empty() ? "" : ",") + std::to_string(c->hello.rank);
  }
  return "rendezvous timed out after all " + std::to_string(nranks_) +
         " ranks joined, in init's exchange round " + std::to_string(round_) +
         ": rank(s) " + (behind.empty() ? "none" : behind) +
         " never reached it or the end of init (still in an earlier step, "
         "such as connecting to a peer over a link that carries nothing: "
         "a rank's own message names the link it waited on), while rank(s) " +
         (waiting.empty() ? "none" : waiting) + " waited for them";
}

void RendezvousRoot::acceptSome(int listenFd) {
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

void RendezvousRoot::readClient(Client& c) {
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

void RendezvousRoot::processFrames(Client& c) {
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
      MCL_LOG(Warn, kLogBootstrap, "rendezvous: dropped connection from %s: %s",
              c.address.c_str(), e.what());
      c.socket.close();
    } else {
      failAll(e.code(), std::string("rank ") + std::to_string(c.hello.rank) +
                            ": " + e.what());
    }
  }
}

std::string RendezvousRoot::who(const Client& c) {
  if (c.state == State::AwaitHello) return c.address;
  return "rank " + std::to_string(c.hello.rank) + " at " + c.address;
}

void RendezvousRoot::send(Client& c, FrameType type,
                          const std::vector<uint8_t>& payload) {
  sendSealedFrame(c.socket.fd(), *c.sealer, type, payload,
                  Clock::now() + kSendWindow);
}

void RendezvousRoot::disconnect(Client& c, const char* why) {
  if (c.state == State::Joined && !finished_) {
    failAll(mclRemoteError, "rank " + std::to_string(c.hello.rank) + " (pid " +
                                std::to_string(c.hello.pid) + ") " + why +
                                " during init");
    return;
  }
  c.socket.close();
}

// Tells every joined rank why init failed, then ends the root.
void RendezvousRoot::failAll(int code, const std::string& message) {
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

}  // namespace mcl::rendezvous
