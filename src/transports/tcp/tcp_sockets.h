// The sockets of one rank in one communicator (what TcpDevice builds on):
// its endpoints (the
// allowed interfaces, each with a listening port), the links chosen to
// each TCP peer, the authenticated sockets (several per link, striped), the
// connections built on them, and a waker that sleeps in poll().
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/auth.h"
#include "base/error.h"
#include "topology/ifname_filter.h"
#include "transports/tcp/cable_rejoin.h"
#include "transports/tcp/link_choice.h"
#include "transports/tcp/tcp_connection.h"
#include "transports/tcp/tcp_listener.h"
#include "transports/tcp/tcp_options.h"
#include "transports/transport.h"

namespace mcl::transport::tcp {

constexpr uint32_t kTcpChannels = 2;  // collective, point-to-point
// Links a pair uses at most, the LAN to fall back on besides (a bit each
// in the connector's verdict).
constexpr size_t kMostLinksPerPair = 16;

// The interfaces a pair of ranks must use, at this end and at the peer's
// (from MCL_TOPO_FILE's cables); empty sets mean no restriction.
struct InterfaceRestriction {
  std::set<std::string> local;
  std::set<std::string> remote;
};

class TcpSockets {
 public:
  // Opens a listening socket on each allowed interface address.
  TcpSockets(int rank, const Secret& secret, uint64_t commId,
             const TcpOptions& options);
  ~TcpSockets();

  const std::vector<Endpoint>& endpoints() const { return endpoints_; }

  // Connects to every peer in `peers` (the higher rank connects, the lower
  // accepts), given every rank's endpoints and which ranks share this host.
  // A peer in `restrictions` is reached only over the interfaces named
  // there.
  void connectPeers(const std::vector<std::vector<Endpoint>>& all,
                    const std::vector<int>& peers,
                    const std::vector<bool>& sameHost,
                    const std::map<int, InterfaceRestriction>& restrictions,
                    platform::Deadline deadline,
                    const std::function<void()>& betweenSlices);
  // Init is over: close the listening sockets, or keep them where a pair
  // has several links, for a cable that comes back (cable_rejoin.h).
  void stopListening();

  std::unique_ptr<Connection> connect(int peer, uint32_t channel);
  // What encrypted pieces use: AES-256-GCM when every rank's CPU has it.
  void useCipher(PieceCipher cipher) { cipher_ = cipher; }
  Waker& waker() { return *waker_; }
  // The links chosen to each peer this rank connected, by peer: those in
  // use once init is over.
  const std::map<int, std::vector<Link>>& links() const { return links_; }
  // The links to a peer that init left out (they carried nothing), by
  // peer: not a path to fall back on.
  const std::map<int, std::vector<Link>>& droppedLinks() const {
    return dropped_;
  }
  // The flag the cable watch sets while the link from here to peer is
  // down (one per link, shared by the connections over it).
  std::shared_ptr<std::atomic<bool>> linkDownSignal(int peer,
                                                    const Link& link) const;
  // Every connection connect() made (alive while the communicator is).
  const std::vector<TcpConnection*>& connectionsMade() const {
    return connections_;
  }
  // Whether init made a standby over the LAN to peer (tcp_standby.cpp).
  bool hasStandby(int peer) const { return standbyLinks_.count(peer) != 0; }
  // The link the standby to peer rides, or null.
  const Link* standbyLink(int peer) const {
    auto it = standbyLinks_.find(peer);
    return it == standbyLinks_.end() ? nullptr : &it->second;
  }

 private:
  // Connects over link and proves the secret as stream key, again with a
  // new connection when the peer's listener drops or stalls an attempt.
  ProvenSocket connectAndProve(int peer, const Link& link, const StreamKey& key,
                               platform::Deadline deadline);

  // [channel][link]: the sockets of one pair's link, in stripe order.
  using PairSockets = std::vector<std::vector<std::vector<ProvenSocket>>>;
  static PairSockets emptyPairSockets(size_t links);
  // Registers a connection over several links with rejoin_ (made on the
  // first call), which offers it new sockets for cables that come back.
  void watchForCablesBack(int peer, uint32_t channel, TcpConnection& conn);
  // One pair's sockets (pair_sockets.cpp): connected to a lower rank, or
  // taken from the listener for a higher one. A link that cannot be
  // connected over is dropped where the pair has another; links_[peer]
  // keeps the links in use.
  void connectPair(int peer, platform::Deadline deadline);
  void acceptPair(int peer, platform::Deadline deadline,
                  const std::function<void()>& betweenSlices);
  // The first socket of a link (channel 0, stripe 0) as it came, and what
  // of the connector's verdict was read from it.
  struct FirstSocket {
    ProvenSocket sock;
    std::vector<uint8_t> verdict;
  };
  // The acceptor's wait for the verdict (the mask of links used), reading
  // every first socket as it arrives; *firsts keeps them.
  uint32_t awaitVerdict(int peer, const std::vector<Link>& links,
                        platform::Deadline deadline,
                        const std::function<void()>& betweenSlices,
                        std::map<uint32_t, FirstSocket>* firsts);
  // The mask a verdict's bytes carry; throws when they fail their check.
  uint32_t checkedVerdict(int peer, const std::vector<Link>& links,
                          const ProvenSocket& sock,
                          const std::vector<uint8_t>& bytes) const;
  // A standby socket per channel over the LAN beside the cables (key: its
  // stream, the channel set here), within a second: false (got left as
  // it was) where the LAN does not connect.
  bool connectStandby(int peer, const Link& link, StreamKey key,
                      platform::Deadline deadline, PairSockets* got);
  // The connector's side: whether the acceptor took the standby in (its
  // sealed mask on the first cable's first socket); throws where the
  // cable fails meanwhile.
  bool standbyKeptByPeer(int peer, const std::vector<Link>& links,
                         uint32_t mask, const PairSockets& got,
                         platform::Deadline deadline);
  // The acceptor's side: the standby socket of key's channel, within a
  // second; false (every channel's dropped, with an INFO) where it does
  // not come.
  bool takeStandby(int peer, const Link& link, const StreamKey& key,
                   platform::Deadline deadline,
                   std::map<uint32_t, FirstSocket>* firsts, PairSockets* got);
  // Keeps the sockets of the links in mask (why(l): why link l is not),
  // warning for each link left out.
  void keepLinks(int peer, const std::vector<Link>& candidates, uint32_t mask,
                 PairSockets got,
                 const std::function<std::string(size_t)>& why);
  // How data goes over a link of that kind ("in the clear", the cipher).
  const char* dataProtection(LinkKind kind) const;
  // The pair's links, then the LAN to fall back on (if any).
  std::vector<Link> candidates(int peer) const;
  // e, naming the links this rank waited on and which side it was.
  Error waitedOver(int peer, const std::vector<Link>& links,
                   const Error& e) const;

  int rank_;
  Secret secret_;
  uint64_t commId_;
  TcpOptions options_;
  std::vector<Endpoint> endpoints_;
  PieceCipher cipher_ = PieceCipher::ChaCha20Poly1305;
  std::unique_ptr<TcpListener> listener_;
  std::map<int, std::vector<Link>> links_;
  std::map<int, Link> fallbacks_;  // a LAN beside the pair's cables
  std::map<int, std::vector<Link>> dropped_;
  std::map<std::pair<int, uint32_t>, std::vector<ProvenSocket>> sockets_;
  // By pair and channel, the standby socket; by pair, the link it rides.
  std::map<std::pair<int, uint32_t>, ProvenSocket> standby_;
  std::map<int, Link> standbyLinks_;
  // Local interfaces over which a standby failed to connect at init.
  std::set<std::string> standbyFailedOn_;
  std::vector<TcpConnection*> connections_;
  mutable std::map<std::pair<int, std::string>,
                   std::shared_ptr<std::atomic<bool>>>
      linkDown_;
  std::unique_ptr<Waker> waker_;
  // Made with the first connection over several links; stopped before the
  // listener it takes from goes (~TcpSockets).
  std::shared_ptr<CableRejoin> rejoin_;
};

}  // namespace mcl::transport::tcp
