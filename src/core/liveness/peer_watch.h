// A communicator's side channel: one small authenticated TCP connection to
// every peer, kept by a background thread that beats every
// MCL_PEER_TIMEOUT / 8 (at most once a second) and reads the peers' beats.
// A link of UC RDMA says nothing when its peer dies, and no link says
// anything when a process stops; this channel tells the two apart in
// seconds instead of at MCL_TIMEOUT:
//   - a connection closed without a farewell is a process that died,
//     noticed as soon as its kernel closes the socket (well within 1 s);
//   - beats that stop for MCL_PEER_TIMEOUT are a peer that stopped
//     answering (host down, every link gone, SIGSTOP).
// A rank busy in its own compute keeps beating: the thread is its own. A
// communicator that is destroyed says farewell first, so its peers' links
// (which deliver its last bytes in order) decide, not this channel.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/auth.h"
#include "base/session_keys.h"
#include "core/liveness/cable_watch.h"
#include "platform/link_state.h"
#include "platform/socket.h"
#include "platform/tcp_progress.h"
#include "transports/transport.h"

namespace mcl {

class PeerWatch final : public transport::PeerHealth {
 public:
  // Listens on `local` (the address this rank reached the rendezvous
  // from: its peers can reach it there), on a port of the system's choice.
  PeerWatch(int rank, int nranks, uint64_t commId, const Secret& secret,
            const platform::SocketAddress& local,
            std::chrono::milliseconds peerTimeout, std::string label);
  ~PeerWatch() override;  // farewell to every peer, then closes
  PeerWatch(const PeerWatch&) = delete;
  PeerWatch& operator=(const PeerWatch&) = delete;

  // "ip:port", for the other ranks.
  std::string address() const;
  // Connects to every peer (all[r]: rank r's address()), each connection
  // proven both ways with the communicator's secret, then starts the
  // thread. Strangers that connect meanwhile are dropped. Throws
  // mclSystemError or mclRemoteError naming the peer. While it waits for
  // lower ranks it also watches the rendezvous (rendezvousFd): when that
  // turns readable, whenReadable throws the reason another rank failed.
  void connect(const std::vector<std::string>& all, platform::Deadline deadline,
               int rendezvousFd = -1,
               const std::function<void()>& whenReadable = {});

  // From then on the thread also watches the links the connections ride
  // (cable_watch.h). Once, after connect().
  void watchCables(std::unique_ptr<CableWatch> cables);
  // What the cable watch counted ({} before watchCables or without one).
  CableWatch::Counts cableCounts() const;

  std::string problemWith(int peer) const override;
  std::string farewellOf(int peer) const override;
  std::string linkNote(int peer) const override;
  // Once per communicator: later reasons are the first one's consequences.
  void sayFarewell(const std::string& reason) override;
  // The same for a rank that leaves having done all it was asked (it
  // destroys its communicator): peers count the news only after a grace,
  // since what it sent on its links just before may still be on the way.
  void sayGoodbye(const std::string& reason);

 private:
  // Cut: its side channel broke on a network error (timed out,
  // unreachable), not a close: the path, not the process, failed.
  enum class State : int { Alive, Left, Died, Stopped, GaveUp, Cut };
  struct Peer {
    // Closed by the thread alone (and the destructor, after it); sends and
    // the close under sendMutex_.
    platform::Socket socket;
    bool muted = false;  // a message to it was cut short; under sendMutex_
    // Its side channel's link was said to be lost (the thread's alone).
    bool sideLinkLostTold = false;
    // Its socket's history, where the kernel does not say how long it has
    // heard nothing (the thread's alone).
    platform::SilenceHistory silence;
    std::atomic<int> state{int(State::Alive)};
    std::atomic<int64_t> lastHeardNs{0};
    std::atomic<int64_t> changedNs{0};  // when it died or stopped
    std::atomic<int> cutErrno{0};       // why it was cut (State::Cut)
    bool saidFarewell = false;          // the thread's alone
    std::string inbox;                  // bytes of an unfinished message
    // Every message is sealed with the connection's keys (derived in its
    // handshake): numbered by the sender (under sendMutex_), the receiver
    // takes only numbers above the last (the thread's alone).
    SessionKeys keys;
    uint64_t sent = 0;
    uint64_t lastReceived = 0;
    std::string reason;                 // why it gave up; under reasonMutex_
    std::atomic<bool> finished{false};  // it left having done its part
  };

  struct Knock;
  void connectTo(int peer, const platform::SocketAddress& where,
                 platform::Deadline deadline);
  void connectOnce(int peer, const platform::SocketAddress& where,
                   platform::Deadline deadline);
  // The acceptor's thread, from the constructor until every lower rank
  // connected (or the destructor): serves every connection at once, so a
  // stranger that says nothing holds no peer up.
  void acceptFromLowerRanks();
  void acceptKnocks(std::vector<std::unique_ptr<Knock>>& knocks);
  bool serveKnock(Knock& k);
  // Waits for the acceptor to be done, watching the rendezvous meanwhile.
  void awaitLowerRanks(platform::Deadline deadline, int rendezvousFd,
                       const std::function<void()>& whenReadable);
  void closePipes();
  static int64_t watchNowNs();  // the steady clock, in ns
  void run();
  // Tells the cable watch what the kernel says of each side channel's
  // socket (a link that carries nothing leaves its beats unacknowledged).
  void lookAtSideChannels(CableWatch& cables, int64_t nowNs);
  void readFrom(int peer, int64_t nowNs);
  // A peer unheard for timeoutNs stopped answering, unless its side
  // channel rides a lost link while others carry (the cable watch says).
  void lookForStopped(int64_t now, int64_t timeoutNs, int64_t beatNs,
                      const CableWatch* cables);
  void sendToAll(const std::string& message);
  void sendReason(char kind, const std::string& reason);  // once
  void take(int peer, int64_t nowNs);  // whole messages of the inbox
  // One opened message; false when it is not the side channel's.
  bool handle(Peer& p, const std::string& message, int64_t nowNs);
  void distrust(Peer& p, const char* why);

  int rank_;
  int nranks_;
  uint64_t commId_;
  Secret secret_;
  std::chrono::milliseconds peerTimeout_;
  std::string label_;
  platform::Socket listener_;
  std::vector<Peer> peers_;
  int wakeRead_ = -1;
  int wakeWrite_ = -1;
  // The acceptor writes a byte here when it is done.
  int acceptedRead_ = -1;
  int acceptedWrite_ = -1;
  std::atomic<int> lowerRanksWaiting_{0};
  std::string acceptFailure_;  // the acceptor's, read after it joined
  std::thread acceptor_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> saidFarewell_{false};
  std::mutex sendMutex_;  // a message's bytes stay together on a socket
  mutable std::mutex reasonMutex_;
  // Set once by watchCables, read by the thread and by problemWith.
  std::unique_ptr<CableWatch> cableOwner_;
  std::unique_ptr<platform::LinkEvents> linkEvents_;
  std::atomic<CableWatch*> cables_{nullptr};
  std::thread thread_;
};

}  // namespace mcl
