// TCP as a Device: any two ranks, over the links (interfaces) chosen for
// the pair, several authenticated sockets per link (tcp_sockets.h). Last in
// priority: it joins what nothing faster can.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "transports/device.h"
#include "transports/tcp/link_choice.h"
#include "transports/tcp/tcp_options.h"
#include "transports/tcp/tcp_sockets.h"

namespace mcl::transport::tcp {

class TcpDevice final : public Device {
 public:
  explicit TcpDevice(const DeviceInit& init);

  const char* name() const override { return "tcp"; }
  transport::LinkKind linkKind() const override {
    return transport::LinkKind::Socket;
  }
  Verdict reaches(int a, int b) const override;
  // A cable or LAN both ranks' endpoints show, on a pair MCL_TOPO_FILE
  // does not pin to named cables (a routed path may not connect in time).
  bool canStandBy(int a, int b) const override;
  void open(const std::vector<int>& candidates,
            platform::Deadline deadline) override;
  std::vector<uint8_t> details() const override;
  void learn(const std::vector<std::vector<uint8_t>>& all,
             const topology::Cluster& cluster) override;
  void describePath(int a, int b, topology::RankPath& path) const override;
  void connect(const std::vector<int>& peers, InitExchange& exchange,
               platform::Deadline deadline) override;
  void afterBarrier() override { sockets_->stopListening(); }
  std::unique_ptr<Connection> connection(int peer, Channel channel) override;
  Waker& waker() override { return sockets_->waker(); }
  uint64_t receiveCapacity() const override { return capacity_; }
  BufferUse bufferUse() const override;
  std::vector<PeerLinks> watchedLinks() const override;
  // "bytes_sent" and "bytes_resent" (the kernel's retransmissions) over
  // every connection: what `qualify` calls a LOSSY cable; and
  // "sockets_given_up" and "bytes_moved": cables lost mid-job, and the
  // pieces sent again over the links that remained; "sockets_taken_back":
  // new sockets in their place once their cables came back.
  std::vector<std::pair<std::string, uint64_t>> counters() const override;

 private:
  // The interfaces ranks a and b must use (from MCL_TOPO_FILE's cables
  // between their hosts), seen from a; empty for a detected cluster.
  InterfaceRestriction restrictionFor(int a, int b) const;

  DeviceInit init_;
  TcpOptions options_;
  std::unique_ptr<TcpSockets> sockets_;
  std::vector<std::vector<Endpoint>> endpoints_;  // by rank, from learn()
  const topology::Cluster* cluster_ = nullptr;
  uint64_t capacity_ = 0;
  size_t peers_ = 0;
};

}  // namespace mcl::transport::tcp
