// RDMA as a Device: ranks on different Macs, over a queue pair per cable
// and channel (rdma_wires.h); on the emulated fabric every rank is a Mac of
// its own. Ranks of one Mac are left to shared memory.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "transports/device.h"
#include "transports/rdma/rdma_options.h"
#include "transports/rdma/rdma_wires.h"

namespace mcl::transport::rdma {

class RdmaDevice final : public Device {
 public:
  explicit RdmaDevice(const DeviceInit& init);

  const char* name() const override { return "rdma"; }
  LinkKind linkKind() const override {
    return options_.provider.provider == "emu" ? LinkKind::EmulatedRdma
                                               : LinkKind::Rdma;
  }
  Verdict reaches(int a, int b) const override;
  void open(const std::vector<int>& candidates,
            platform::Deadline deadline) override;
  std::vector<uint8_t> details() const override;
  void learn(const std::vector<std::vector<uint8_t>>& all,
             const topology::Cluster& cluster) override;
  void describePath(int a, int b, topology::RankPath& path) const override;
  // Runs two rounds of `exchange` (the Macs of the emulated fabric, then
  // the queue pairs' addresses).
  void connect(const std::vector<int>& peers, InitExchange& exchange,
               platform::Deadline deadline) override;
  std::unique_ptr<Connection> connection(int peer, Channel channel) override;
  Waker& waker() override { return wires_->waker(); }
  uint64_t receiveCapacity() const override;
  BufferUse bufferUse() const override;
  int fewestWires() const override { return fewestWires_; }

 private:
  std::map<int, WirePlan> planFor(const std::vector<int>& peers,
                                  InitExchange& exchange) const;

  DeviceInit init_;
  RdmaOptions options_;
  std::unique_ptr<RdmaWires> wires_;
  const topology::Cluster* cluster_ = nullptr;
  int fewestWires_ = 1;
};

}  // namespace mcl::transport::rdma
