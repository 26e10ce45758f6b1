// What a connection to the rendezvous root that has not proven the secret
// may cost (base/stranger_policy.h): its buffered bytes, its time, and its
// share of the connections from its address.
#include <cstddef>
#include <memory>
#include <string>

#include "base/log.h"
#include "base/stranger_policy.h"
#include "core/bootstrap/rendezvous_root.h"

namespace mcl::rendezvous {

using stranger_policy::kMaxUnprovenPerAddress;

size_t RendezvousRoot::inboxLimit(const Client& c) {
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
void RendezvousRoot::limitUnproven(const std::string& host) {
  Client* oldest = nullptr;
  size_t unproven = 0;
  for (auto& c : clients_)
    if (c->socket.valid() && c->state == State::AwaitProof && c->host == host) {
      ++unproven;
      if (oldest == nullptr || c->accepted < oldest->accepted) oldest = c.get();
    }
  if (unproven >= kMaxUnprovenPerAddress) dropStranger(*oldest);
}

// The oldest connection still to prove itself, to free a descriptor.
bool RendezvousRoot::dropOldestStranger() {
  Client* oldest = nullptr;
  for (auto& c : clients_)
    if (c->socket.valid() && c->state == State::AwaitProof &&
        (oldest == nullptr || c->accepted < oldest->accepted))
      oldest = c.get();
  if (oldest == nullptr) return false;
  dropStranger(*oldest);
  return true;
}

void RendezvousRoot::dropStranger(Client& c) {
  ++strangersDropped_;
  MCL_LOG(Info, kLogBootstrap,
          "rendezvous: dropped %s: it did not prove the secret in time",
          c.address.c_str());
  c.socket.close();
}

void RendezvousRoot::dropExpired() {
  Deadline now = Clock::now();
  for (auto& c : clients_)
    if (c->socket.valid() &&
        (c->state == State::AwaitProof || c->state == State::AwaitHello) &&
        now > c->authDeadline)
      dropStranger(*c);
}

}  // namespace mcl::rendezvous
