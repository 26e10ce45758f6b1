// The rendezvous root's join table: each connection's proof of the
// secret, the ranks' hellos (one process per rank, all agreeing on nranks
// and on the protocol), the welcome, and the all-gathers of init.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/auth.h"
#include "base/error.h"
#include "base/log.h"
#include "base/session_keys.h"
#include "core/bootstrap/bootstrap_protocol.h"
#include "core/bootstrap/rendezvous_root.h"
#include "core/bootstrap/root_registry.h"

namespace mcl::rendezvous {

void RendezvousRoot::refuseUnsealedHello(Client& c, const Frame& f) {
  std::string rank = "a rank at " + c.address;
  std::string protocol = "an older bootstrap protocol";
  try {
    const Hello h = decodeHello(f.payload);
    rank = "rank " + std::to_string(h.rank) + " (pid " + std::to_string(h.pid) +
           ", at " + c.address + ")";
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

void RendezvousRoot::handle(Client& c, const Frame& f) {
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

void RendezvousRoot::handleProof(Client& c, const Frame& f) {
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

void RendezvousRoot::handleHello(Client& c, const Frame& f) {
  if (f.type != FrameType::Hello)
    throw error(mclRemoteError, "sent %s instead of Hello",
                frameTypeName(f.type));
  Hello h = decodeHello(f.payload);
  if (h.protocol != kBootstrapProtocol)
    return failAll(mclInvalidUsage,
                   "rank " + std::to_string(h.rank) + " (pid " +
                       std::to_string(h.pid) + ") speaks bootstrap protocol " +
                       std::to_string(h.protocol) + ", this root speaks " +
                       std::to_string(kBootstrapProtocol) +
                       ": mixed mcl versions");
  if (nranks_ == 0) {
    nranks_ = h.nranks;
    firstRank_ = h.rank;
    ranks_.assign(static_cast<size_t>(nranks_), nullptr);
  } else if (h.nranks != nranks_) {
    return failAll(mclInvalidUsage, "ranks disagree on nranks: rank " +
                                        std::to_string(h.rank) + " says " +
                                        std::to_string(h.nranks) + ", rank " +
                                        std::to_string(firstRank_) + " says " +
                                        std::to_string(nranks_));
  }
  if (h.rank < 0 || h.rank >= nranks_)
    return failAll(mclInvalidArgument, "a process joined as rank " +
                                           std::to_string(h.rank) + " of " +
                                           std::to_string(nranks_));
  Client*& slot = ranks_[static_cast<size_t>(h.rank)];
  if (slot != nullptr)
    return failAll(mclInvalidUsage, "two processes claim rank " +
                                        std::to_string(h.rank) + " (pids " +
                                        std::to_string(slot->hello.pid) +
                                        " and " + std::to_string(h.pid) + ")");
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

void RendezvousRoot::welcomeAll() {
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

void RendezvousRoot::handleJoined(Client& c, const Frame& f) {
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
void RendezvousRoot::relayFailure(Client& c, const Frame& f) {
  Failure failure = decodeFailure(f.payload);
  failure.code = failureResult(failure.code);
  const std::string prefix = "rank " + std::to_string(c.hello.rank) + ": ";
  if (failure.message.compare(0, prefix.size(), prefix) != 0)
    failure.message = prefix + failure.message;
  failAll(failure.code, failure.message);
}

}  // namespace mcl::rendezvous
