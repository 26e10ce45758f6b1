// A communicator's view of its same-host peers' mclMemAlloc memory: each
// peer segment is opened by name on first use and kept mapped (a training
// loop passes the same buffers call after call). Whenever a new one is
// mapped, those whose owners freed them are let go, and past a bound all
// that the current call does not use.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "algorithms/shared_buffers.h"
#include "platform/shared_memory.h"

namespace mcl {

class PeerSegments final : public SharedBufferMap {
 public:
  explicit PeerSegments(int rank) : rank_(rank) {}

  bool find(const void* data, size_t bytes,
            SharedBufferRef* ref) const override;
  std::byte* map(int peer, const SharedBufferRef& ref, size_t bytes) override;
  void noteInPlaceCall() override;

  uint64_t inPlaceCalls() const {
    return inPlaceCalls_.load(std::memory_order_relaxed);
  }
  // Bytes of peers' memory mapped now.
  uint64_t mappedBytes() const {
    return mappedBytes_.load(std::memory_order_relaxed);
  }

 private:
  struct Mapped {
    platform::SharedMemory memory;
    uint64_t lastCall = 0;
  };
  // all: every segment the current call does not use; else those freed.
  void evictUnused(bool all);

  int rank_;
  std::map<std::string, Mapped> segments_;  // by name
  uint64_t call_ = 1;                       // the call mapping now
  std::atomic<uint64_t> inPlaceCalls_{0};
  std::atomic<uint64_t> mappedBytes_{0};
};

}  // namespace mcl
