// A rank's side of the rendezvous: connect to the root (again while it is
// not up yet or drops the attempt), prove the secret and check the root's
// proof, seal everything after with the session keys, introduce
// itself, receive everyone's table, then all-gather what the transports need
// to connect. Every step is bounded by the deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/sealed_channel.h"
#include "core/bootstrap/bootstrap_protocol.h"
#include "core/bootstrap/unique_id.h"
#include "platform/socket.h"

namespace mcl {

class InitCancel;

class BootstrapClient {
 public:
  // Joins the rendezvous of id as rank/nranks. Throws Error: mclTimeout when
  // the root cannot be reached or the others do not come, the root's code
  // when it reports a failure (wrong secret, nranks disagreement, ...).
  // An init that can be cancelled (init_cancel.h) ends at once when it is.
  BootstrapClient(const UniqueIdContents& id, const Hello& hello,
                  platform::Deadline deadline);
  ~BootstrapClient();
  BootstrapClient(const BootstrapClient&) = delete;
  BootstrapClient& operator=(const BootstrapClient&) = delete;

  const Welcome& welcome() const { return welcome_; }

  // Every rank's bytes, indexed by rank.
  std::vector<std::vector<uint8_t>> allGather(const std::vector<uint8_t>& mine);
  void barrier() { allGather({}); }

  // Tells the root this rank is done; the connection closes.
  void close();
  // Tells the root this rank's init failed and why (the root tells every
  // rank), then closes. Best effort: the root may be gone already.
  void abandon(int code, const std::string& message);

  // Between rounds, the root sends nothing unless init failed: throws its
  // Failure (or the connection's loss) when one came, without waiting.
  void throwIfFailed();
  // After this rank's own init failed: throws another rank's Failure when
  // one arrives within `wait` (it is likely why this rank failed: that
  // rank's segment gone, its socket closed), else returns.
  void throwFailureArrivingWithin(std::chrono::milliseconds wait);
  // Readable when throwIfFailed has something to say (to poll beside
  // other sockets).
  int fd() const { return socket_.fd(); }

  // The address this rank reached the root from: its peers can reach it
  // there too (the side channel listens on it).
  platform::SocketAddress localAddress() const {
    return platform::localAddress(socket_.fd());
  }

 private:
  void join(const UniqueIdContents& id);
  void handshake(const Secret& secret, platform::Deadline attemptDeadline);
  // The next sealed frame, opened.
  Frame receive(platform::Deadline deadline);
  Frame expect(FrameType type, const char* during);
  // The root's Failure frame f as this rank's Error.
  [[noreturn]] void throwFailure(const Frame& f) const;
  void send(FrameType type, const std::vector<uint8_t>& payload,
            const char* during);

  std::string rootText_;
  platform::Socket socket_;
  platform::Deadline deadline_;
  Welcome welcome_;
  uint32_t round_ = 0;
  int rank_ = -1;
  InitCancel* cancel_ = nullptr;  // shuts socket_ down on cancel
  bool challenged_ = false;       // some attempt got the root's challenge
  std::unique_ptr<Sealer> sealer_;
  std::unique_ptr<Opener> opener_;
};

}  // namespace mcl
