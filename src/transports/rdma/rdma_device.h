// RDMA as a Device: ranks on different Macs, over a queue pair per cable
// and channel (rdma_wires.h). open() loads the provider and probes every
// device (port, GID, a queue pair made and dropped); every rank's report
// then decides, pair by pair and alike on every rank, which cables RDMA
// uses (rdma_wire_plan.h). A pair whose cables RDMA cannot use is Broken,
// so under auto another transport takes it (with a WARN) and under
// MCL_TRANSPORT=rdma init fails naming the rank, device and reason. On the
// emulated fabric each rank plays a Mac (MCL_EMU_FABRIC's row); ranks of
// one Mac are left to shared memory.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "transports/device.h"
#include "transports/rdma/emu_fabric.h"
#include "transports/rdma/rdma_options.h"
#include "transports/rdma/rdma_wire_plan.h"
#include "transports/rdma/rdma_wires.h"

namespace mcl::transport::rdma {

class RdmaDevice final : public Device {
 public:
  explicit RdmaDevice(const DeviceInit& init);

  const char* name() const override { return "rdma"; }
  LinkKind linkKind() const override {
    return emulated() ? LinkKind::EmulatedRdma : LinkKind::Rdma;
  }
  Verdict reaches(int a, int b) const override;
  // A provider that cannot load, or a system with no devices, leaves this
  // rank without RDMA (said in its details), not failing init: another
  // transport may join its pairs. A bad setting throws.
  void open(const std::vector<int>& candidates,
            platform::Deadline deadline) override;
  std::vector<uint8_t> details() const override;
  void learn(const std::vector<std::vector<uint8_t>>& all,
             const topology::Cluster& cluster) override;
  Verdict canConnect(int a, int b) const override;
  void describePath(int a, int b, topology::RankPath& path) const override;
  void connect(const std::vector<int>& peers, InitExchange& exchange,
               platform::Deadline deadline) override;
  std::unique_ptr<Connection> connection(int peer, Channel channel) override;
  Waker& waker() override { return wires_->waker(); }
  uint64_t receiveCapacity() const override;
  BufferUse bufferUse() const override;
  int fewestWires() const override { return fewestWires_; }
  void beginCalls() override;
  void endCalls() override;
  // Frames received (credited transmissions), lost, duplicated, resent
  // and probes sent on this communicator's wires (rdma_connection.h).
  std::vector<std::pair<std::string, uint64_t>> counters() const override;

 private:
  bool emulated() const { return options_.provider.provider == "emu"; }
  PairPlan planOf(int a, int b) const;

  DeviceInit init_;
  RdmaOptions options_;
  std::unique_ptr<RdmaWires> wires_;  // null when this rank has no RDMA
  RankRdma mine_;
  std::vector<RankRdma> ranks_;  // every rank's report, from learn()
  std::optional<EmuFabric> fabric_;
  const topology::Cluster* cluster_ = nullptr;
  int fewestWires_ = 1;
};

}  // namespace mcl::transport::rdma
