// A transport core has never heard of, for the registry's tests: ranks that
// are threads of one process, joined by in-process pipes (a bounded queue of
// pieces per direction and channel, behind a mutex). It joins two ranks only
// when they run in one process, and says why not otherwise.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "transports/device.h"

namespace mcl::testing {

class LoopbackPipe {
 public:
  static constexpr size_t kSlots = 4;
  static constexpr size_t kSlotBytes = 4096;

  std::span<std::byte> acquire(size_t maxBytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pieces_.size() >= kSlots) return {};
    staging_.resize(std::min(maxBytes, kSlotBytes));
    return staging_;
  }
  void commit(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    pieces_.emplace_back(staging_.begin(),
                         staging_.begin() + static_cast<ptrdiff_t>(bytes));
  }
  std::span<const std::byte> peek() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pieces_.empty()) return {};
    // A deque keeps its elements in place when the sender appends.
    return std::span<const std::byte>(pieces_.front()).subspan(offset_);
  }
  void release(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    offset_ += bytes;
    if (offset_ == pieces_.front().size()) {
      pieces_.pop_front();
      offset_ = 0;
    }
  }

 private:
  std::mutex mutex_;
  std::vector<std::byte> staging_;  // only the sender touches it
  std::deque<std::vector<std::byte>> pieces_;
  size_t offset_ = 0;
};

// The pipes of every communicator of the process: (comm, from, to, channel).
inline std::shared_ptr<LoopbackPipe> loopbackPipe(uint64_t comm, int from,
                                                  int to, uint32_t channel) {
  static std::mutex mutex;
  static std::map<std::tuple<uint64_t, int, int, uint32_t>,
                  std::shared_ptr<LoopbackPipe>>
      pipes;
  std::lock_guard<std::mutex> lock(mutex);
  auto& pipe = pipes[{comm, from, to, channel}];
  if (!pipe) pipe = std::make_shared<LoopbackPipe>();
  return pipe;
}

class LoopbackConnection final : public transport::Connection {
 public:
  LoopbackConnection(std::shared_ptr<LoopbackPipe> out,
                     std::shared_ptr<LoopbackPipe> in)
      : out_(std::move(out)), in_(std::move(in)) {}
  std::span<std::byte> acquireSend(size_t maxBytes) override {
    return out_->acquire(maxBytes);
  }
  void commitSend(size_t bytes) override { out_->commit(bytes); }
  std::span<const std::byte> peekRecv() override { return in_->peek(); }
  void releaseRecv(size_t bytes) override { in_->release(bytes); }
  bool peerAlive() const override { return true; }
  const char* linkName() const override { return "loopback"; }

 private:
  std::shared_ptr<LoopbackPipe> out_;
  std::shared_ptr<LoopbackPipe> in_;
};

class NapWaker final : public transport::Waker {
 public:
  uint32_t arm() override { return 0; }
  void sleep(uint32_t, int64_t timeoutNs) override {
    std::this_thread::sleep_for(
        std::chrono::nanoseconds(std::min<int64_t>(timeoutNs, 20000)));
  }
  void disarm() override {}
  void interrupt() override {}
  int64_t napNs() const override { return 20000; }
};

class LoopbackDevice final : public transport::Device {
 public:
  explicit LoopbackDevice(const transport::DeviceInit& init)
      : rank_(init.rank) {}
  const char* name() const override { return "loopback"; }
  transport::LinkKind linkKind() const override {
    return transport::LinkKind::SharedMemory;
  }
  transport::Verdict reaches(int a, int b) const override {
    if (a == b) return transport::Verdict::no("not to itself");
    if (places_[size_t(a)].pid != places_[size_t(b)].pid)
      return transport::Verdict::no("the ranks are different processes");
    return transport::Verdict::yes();
  }
  void open(const std::vector<int>&, platform::Deadline) override {}
  std::vector<uint8_t> details() const override { return {0x4c}; }
  void learn(const std::vector<std::vector<uint8_t>>&,
             const topology::Cluster&) override {}
  void describePath(int, int, topology::RankPath& path) const override {
    path.linkKind = "in-process";
  }
  void connect(const std::vector<int>& peers, transport::InitExchange&,
               platform::Deadline) override {
    peers_ = peers;
  }
  std::unique_ptr<transport::Connection> connection(
      int peer, transport::Channel channel) override {
    auto c = static_cast<uint32_t>(channel);
    return std::make_unique<LoopbackConnection>(
        loopbackPipe(commId_, rank_, peer, c),
        loopbackPipe(commId_, peer, rank_, c));
  }
  transport::Waker& waker() override { return waker_; }
  uint64_t receiveCapacity() const override {
    return LoopbackPipe::kSlots * LoopbackPipe::kSlotBytes;
  }
  transport::BufferUse bufferUse() const override {
    transport::BufferUse u;
    u.bytesPerWire = 2 * LoopbackPipe::kSlots * LoopbackPipe::kSlotBytes;
    u.settings = "the test's pipes";
    u.wires = peers_.size();
    return u;
  }

 private:
  int rank_;
  std::vector<int> peers_;
  NapWaker waker_;
};

}  // namespace mcl::testing
