// Takes a cable back into a running communicator's TCP connections
// (tcp_connection.h, "A cable that comes back"). A thread of its own looks
// every 100 ms at the sockets each connection has given up. Where the cable
// watch has said for a second that such a socket's link is up again, the
// connecting rank (the higher one, as at init) makes a new authenticated
// socket over it, and the accepting rank takes that socket from its
// listener, which stays open after init where a pair has several links.
// Each end offers its socket to the connection, which takes it in when the
// old one is read to its end. A failed attempt is tried again every 2 s
// while the link stays up.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "platform/socket.h"
#include "transports/tcp/link_choice.h"
#include "transports/tcp/tcp_connection.h"
#include "transports/tcp/tcp_handshake.h"

namespace mcl::transport::tcp {

// The link numbers of sockets made again (StreamKey::link): apart from
// init's, so that a late socket of one is never taken for the other.
constexpr uint32_t kRejoinLinkBase = 0x10000;

class CableRejoin {
 public:
  // Makes a proven socket to `peer` over a link (blocking, until the
  // deadline; throws on failure), and takes one from the listener that has
  // arrived for a key (or none).
  using Connect = std::function<ProvenSocket(int peer, const Link& link,
                                             const StreamKey& key,
                                             platform::Deadline deadline)>;
  using Take = std::function<std::optional<ProvenSocket>(const StreamKey&)>;
  // One connection: its peer and channel, the links its sockets ride in
  // stripe order (socketsPerLink each), and the cable watch's flag for each
  // link (true: down).
  struct Target {
    int peer = 0;
    uint32_t channel = 0;
    std::vector<Link> links;
    size_t socketsPerLink = 1;
    std::vector<std::shared_ptr<const std::atomic<bool>>> linkDown;
  };

  CableRejoin(int rank, Connect connect, Take take);
  ~CableRejoin();  // stops the thread

  // From the connection's making until forget(id) (before it is gone).
  uint64_t add(TcpConnection* connection, Target target);
  void forget(uint64_t id);

 private:
  struct Entry {
    TcpConnection* connection;
    Target target;
    // By stripe: since when its link has been up while it was given up
    // (0: not), when a socket was last tried for it, and whether one was
    // made and offered (none more until the connection takes it: the far
    // end takes the first).
    std::vector<int64_t> upSinceNs;
    std::vector<int64_t> triedNs;
    std::vector<char> made;
    uint64_t takenIn = 0;  // the connection's socketsRegained() last seen
  };
  void run();
  void look(int64_t nowNs);
  void offer(uint64_t id, size_t stripe, ProvenSocket socket, bool made);

  int rank_;
  Connect connect_;
  Take take_;
  std::mutex mutex_;  // entries_, and every use of their connections
  std::map<uint64_t, Entry> entries_;
  uint64_t nextId_ = 1;
  std::mutex wakeMutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace mcl::transport::tcp
