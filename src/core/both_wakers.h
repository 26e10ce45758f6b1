// Sleeping when a rank has peers over shared memory and over TCP: the
// futex cannot watch sockets and poll() cannot watch the futex, so the rank
// sleeps in poll() on its sockets in short slices, and shared-memory peers
// are seen at the next slice.
#pragma once

#include "transports/transport.h"

#include <cstdint>

namespace mcl {

class BothWakers final : public transport::Waker {
 public:
  BothWakers(transport::Waker& shm, transport::Waker& tcp)
      : shm_(shm), tcp_(tcp) {}
  uint32_t arm() override {
    tcp_.arm();
    return shm_.arm();
  }
  void sleep(uint32_t, int64_t timeoutNs) override {
    constexpr int64_t kSliceNs = 1'000'000;
    tcp_.sleep(0, timeoutNs < kSliceNs ? timeoutNs : kSliceNs);
  }
  void disarm() override {
    shm_.disarm();
    tcp_.disarm();
  }
  void interrupt() override {
    shm_.interrupt();
    tcp_.interrupt();
  }

 private:
  transport::Waker& shm_;
  transport::Waker& tcp_;
};

}  // namespace mcl
