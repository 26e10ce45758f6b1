// Shared memory as a Device: ranks of one host, each pair over rings in the
// receiver's segment (shm_segments.h). Always in the registry: a rank's
// connection to itself is shared memory whatever MCL_TRANSPORT says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transports/device.h"
#include "transports/shm/shm_options.h"
#include "transports/shm/shm_segments.h"

namespace mcl::transport::shm {

class ShmDevice final : public Device {
 public:
  explicit ShmDevice(const DeviceInit& init);

  const char* name() const override { return "shm"; }
  LinkKind linkKind() const override { return LinkKind::SharedMemory; }
  Verdict reaches(int a, int b) const override;
  void open(const std::vector<int>& candidates,
            platform::Deadline deadline) override;
  std::vector<uint8_t> details() const override;
  void learn(const std::vector<std::vector<uint8_t>>& all,
             const topology::Cluster& cluster) override;
  void connect(const std::vector<int>& peers, InitExchange& exchange,
               platform::Deadline deadline) override;
  void afterBarrier() override;
  std::unique_ptr<Connection> connection(int peer,
                                         transport::Channel channel) override;
  Waker& waker() override { return segments_->waker(); }
  uint64_t receiveCapacity() const override { return capacity_; }
  BufferUse bufferUse() const override;

 private:
  DeviceInit init_;
  ShmOptions options_;
  std::unique_ptr<ShmSegments> segments_;
  std::vector<std::string> segmentOf_;  // by rank, from learn()
  uint64_t capacity_ = 0;
  size_t peers_ = 0;  // other ranks connected
};

}  // namespace mcl::transport::shm
