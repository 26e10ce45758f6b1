// Runs lanes of steps to completion. Each lane runs its steps in order; all
// lanes progress together (so a group's sends and receives to different
// peers never wait on each other). Idle waiting is adaptive: spin, then
// yield, then sleep on the waker; every wait is bounded by the timeout
// (measured since the last progress) and checks for abort and dead peers.
#pragma once

#include <cstddef>
#include <span>

#include "algorithms/context.h"
#include "algorithms/op.h"
#include "algorithms/step.h"

namespace mcl {

struct Lane {
  const AlgoContext* context = nullptr;
  std::span<Step> steps;
  size_t next = 0;
  bool flushed = false;  // every byte sent is out of the send queues
  bool stepsDone() const { return next >= steps.size(); }
  bool done() const { return stepsDone() && flushed; }
};

// Throws Error: mclTimeout (no progress within the timeout), mclRemoteError
// (peer gone, or aborted), naming the rank, the peer and the link.
void runLanes(std::span<Lane> lanes);

}  // namespace mcl
