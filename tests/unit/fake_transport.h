// An in-memory transport for tests of the step engine: each direction
// between two ranks is a bounded FIFO of pieces shaped like a shm ring
// (`slots` pieces of at most `slotBytes` each), so a test can make the rings
// tiny and run many ranks' lanes in one thread. A Cluster wires n ranks'
// AlgoContexts to such connections.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "algorithms/collectives.h"
#include "algorithms/context.h"
#include "algorithms/executor.h"
#include "transports/transport.h"

namespace mcl::fake {

struct FifoShape {
  size_t slots = 4;
  size_t slotBytes = 64;
  // Every piece written with non-temporal stores, as a shm ring asks for
  // when the peer's core is far (the step engine's other write path).
  bool streamed = false;
  size_t capacity() const { return slots * slotBytes; }
};

// One direction, sender to receiver.
class Fifo {
 public:
  explicit Fifo(FifoShape shape) : shape_(shape) {}

  std::span<std::byte> acquire(size_t maxBytes) {
    EXPECT_GT(maxBytes, 0u) << "acquireSend(0)";
    if (pieces_.size() >= shape_.slots) return {};
    // Poison the space so a step that publishes bytes it did not write
    // shows up in the results.
    staging_.assign(std::min(maxBytes, shape_.slotBytes), std::byte{0xA5});
    return staging_;
  }
  void commit(size_t bytes) {
    EXPECT_GT(bytes, 0u) << "commitSend(0)";
    EXPECT_LE(bytes, staging_.size()) << "commitSend beyond the acquired space";
    bytes = std::min(bytes, staging_.size());
    pieces_.emplace_back(staging_.begin(),
                         staging_.begin() + static_cast<ptrdiff_t>(bytes));
    staging_.clear();
  }
  std::span<const std::byte> peek() const {
    if (pieces_.empty()) return {};
    const std::vector<std::byte>& p = pieces_.front();
    return std::span<const std::byte>(p).subspan(offset_);
  }
  void release(size_t bytes) {
    ASSERT_FALSE(pieces_.empty()) << "releaseRecv with nothing received";
    ASSERT_LE(offset_ + bytes, pieces_.front().size())
        << "releaseRecv beyond the piece";
    offset_ += bytes;
    if (offset_ == pieces_.front().size()) {
      pieces_.pop_front();
      offset_ = 0;
    }
  }
  // Test-side access: put a piece in / see what is buffered.
  void push(std::vector<std::byte> piece) {
    pieces_.push_back(std::move(piece));
  }
  size_t piecesBuffered() const { return pieces_.size(); }
  bool streamed() const { return shape_.streamed; }

 private:
  FifoShape shape_;
  std::deque<std::vector<std::byte>> pieces_;
  size_t offset_ = 0;
  std::vector<std::byte> staging_;
};

class FakeConnection : public transport::Connection {
 public:
  FakeConnection(Fifo* out, Fifo* in) : out_(out), in_(in) {}
  std::span<std::byte> acquireSend(size_t maxBytes) override {
    return out_->acquire(maxBytes);
  }
  void commitSend(size_t bytes) override { out_->commit(bytes); }
  std::span<const std::byte> peekRecv() override { return in_->peek(); }
  void releaseRecv(size_t bytes) override { in_->release(bytes); }
  bool peerAlive() const override { return alive; }
  const char* linkName() const override { return "fake"; }
  bool choosesSlotStores(size_t) const override { return out_->streamed(); }
  bool streamNextSlot(bool) override { return true; }

  bool alive = true;

 private:
  Fifo* out_;
  Fifo* in_;
};

// Nobody else runs in a one-thread test: sleeping just waits a little.
class FakeWaker : public transport::Waker {
 public:
  uint32_t arm() override {
    EXPECT_FALSE(armed_) << "arm() twice without disarm()";
    armed_ = true;
    return ++token_;
  }
  void sleep(uint32_t token, int64_t timeoutNs) override {
    EXPECT_TRUE(armed_) << "sleep() without arm()";
    EXPECT_EQ(token, token_);
    EXPECT_GT(timeoutNs, 0);
    ++sleeps;
    std::this_thread::sleep_for(
        std::chrono::nanoseconds(std::min<int64_t>(timeoutNs, 100'000)));
  }
  void disarm() override { armed_ = false; }
  void interrupt() override {}

  int sleeps = 0;

 private:
  bool armed_ = false;
  uint32_t token_ = 0;
};

// n ranks, a FIFO per ordered pair, an AlgoContext per rank sized the way
// comm_init.cpp sizes it (maxStepBytes = half the smallest ring).
class Cluster {
 public:
  Cluster(int nranks, FifoShape shape)
      : n_(nranks), contexts_(size(nranks)), scratch_(size(nranks)) {
    for (size_t i = 0; i < size(n_) * size(n_); ++i)
      fifos_.push_back(std::make_unique<Fifo>(shape));
    conns_.resize(size(n_) * size(n_));
    for (int r = 0; r < n_; ++r) {
      AlgoContext& c = contexts_[size(r)];
      c.rank = r;
      c.nranks = n_;
      c.peers.assign(size(n_), nullptr);
      c.waker = &waker_;
      c.timeout = std::chrono::milliseconds(500);
      c.wait.spinNs = 2'000;
      c.wait.yieldNs = 20'000;
      c.maxStepBytes = shape.capacity() / 2;
      c.call = &scratch_[size(r)];
      for (int p = 0; p < n_; ++p) {
        if (p == r) continue;
        auto& conn = conns_[index(r, p)];
        conn = std::make_unique<FakeConnection>(fifos_[index(r, p)].get(),
                                                fifos_[index(p, r)].get());
        c.peers[size(p)] = conn.get();
      }
      // One FIFO per pair serves both channels: these tests never run
      // point-to-point and collectives at once.
      c.p2pPeers = c.peers;
    }
  }

  int nranks() const { return n_; }
  AlgoContext& context(int r) { return contexts_[size(r)]; }
  FakeConnection& connection(int from, int to) {
    return *conns_[index(from, to)];
  }
  Fifo& fifo(int from, int to) { return *fifos_[index(from, to)]; }
  FakeWaker& waker() { return waker_; }

  // Builds each listed rank's steps for its op and runs every lane in one
  // runLanes call.
  void run(const std::vector<OpArgs>& ops, std::vector<int> ranks = {}) {
    if (ranks.empty())
      for (int r = 0; r < n_; ++r) ranks.push_back(r);
    std::vector<std::vector<Step>> steps(ranks.size());
    std::vector<Lane> lanes(ranks.size());
    for (size_t i = 0; i < ranks.size(); ++i) {
      AlgoContext& c = context(ranks[i]);
      appendSteps(ops[i], c, steps[i]);
      for (Step& s : steps[i]) s.kind = ops[i].kind;  // as execute.cpp does
      lanes[i].context = &c;
      lanes[i].steps = steps[i];
    }
    runLanes(lanes);
  }

  // Pieces nobody consumed (a schedule that sends more than it receives).
  size_t piecesLeft() const {
    size_t total = 0;
    for (const auto& f : fifos_) total += f->piecesBuffered();
    return total;
  }

 private:
  static size_t size(int v) { return static_cast<size_t>(v); }
  size_t index(int from, int to) const {
    return size(from) * size(n_) + size(to);
  }

  int n_;
  std::vector<AlgoContext> contexts_;
  std::vector<CallScratch> scratch_;
  std::vector<std::unique_ptr<Fifo>> fifos_;
  std::vector<std::unique_ptr<FakeConnection>> conns_;
  FakeWaker waker_;
};

}  // namespace mcl::fake
