// Accepts the TCP data connections of one communicator during init, on a
// thread of its own so every rank can connect to its peers while its own
// peers connect to it. Each socket must pass the handshake within a short
// window; strangers are dropped one by one without disturbing the others.
// The listening sockets close when init is done, except where a pair has
// several links: then they stay for a cable that comes back (cable_rejoin.h),
// under the same rules for strangers.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "transports/tcp/tcp_handshake.h"

namespace mcl::transport::tcp {

class TcpListener {
 public:
  TcpListener(std::vector<platform::Socket> listeners, const Secret& secret,
              uint64_t commId, int rank);
  ~TcpListener();  // stops the thread and closes every listening socket

  // The authenticated socket for key, with its session keys; throws
  // mclTimeout at the deadline.
  // Waits in slices, calling betweenSlices (if any) after each: it may
  // throw to stop the wait (another rank's init failed).
  ProvenSocket take(const StreamKey& key, platform::Deadline deadline,
                    const std::function<void()>& betweenSlices = {});
  // Whichever of keys has arrived already, without waiting (*which says
  // whose), or none.
  std::optional<ProvenSocket> takeArrived(const std::vector<StreamKey>& keys,
                                          StreamKey* which);

 private:
  void run();

  struct Pending;
  std::vector<platform::Socket> listeners_;
  Secret secret_;
  uint64_t commId_;
  int rank_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<StreamKey, ProvenSocket> ready_;
  bool stop_ = false;
  int wakeRead_ = -1;
  int wakeWrite_ = -1;
  std::thread thread_;
};

}  // namespace mcl::transport::tcp
