// Sleeping when a rank's peers are spread over several transports: one
// waker cannot watch the others' events (a futex cannot watch sockets, nor
// poll() the futex), so the rank arms them all and sleeps in one for a
// short slice at a time; the others' peers are seen at the next slice. The
// one that naps by itself (RDMA) is chosen when there is one, else the
// last in priority (TCP's poll()).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "transports/transport.h"

namespace mcl {

class CombinedWaker final : public transport::Waker {
 public:
  explicit CombinedWaker(std::vector<transport::Waker*> wakers)
      : wakers_(std::move(wakers)), sleeper_(wakers_.back()) {
    for (transport::Waker* w : wakers_)
      if (w->napNs() > 0 &&
          (sleeper_->napNs() == 0 || w->napNs() < sleeper_->napNs()))
        sleeper_ = w;
  }
  uint32_t arm() override {
    uint32_t token = 0;
    for (transport::Waker* w : wakers_) {
      uint32_t t = w->arm();
      if (w == sleeper_) token = t;
    }
    return token;
  }
  void sleep(uint32_t token, int64_t timeoutNs) override {
    constexpr int64_t kSliceNs = 1'000'000;
    sleeper_->sleep(token, std::min(timeoutNs, kSliceNs));
  }
  void disarm() override {
    for (transport::Waker* w : wakers_) w->disarm();
  }
  void interrupt() override {
    for (transport::Waker* w : wakers_) w->interrupt();
  }
  int64_t napNs() const override { return sleeper_->napNs(); }

 private:
  std::vector<transport::Waker*> wakers_;
  transport::Waker* sleeper_;
};

}  // namespace mcl
