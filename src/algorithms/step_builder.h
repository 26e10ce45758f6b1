// Shorthands that append the steps of ring and chain schedules, so each
// algorithm file reads like its schedule.
#pragma once

#include <cstddef>
#include <vector>

#include "algorithms/context.h"
#include "algorithms/op.h"
#include "algorithms/step.h"

namespace mcl {

class StepBuilder {
 public:
  StepBuilder(const OpArgs& op, const AlgoContext& ctx,
              std::vector<Step>& steps);

  size_t elementBytes() const { return elementBytes_; }
  const std::byte* send(size_t elementOffset) const;
  std::byte* recv(size_t elementOffset) const;

  // Each appends nothing when elements == 0.
  void copy(const std::byte* from, std::byte* to, size_t elements);
  void sendTo(int peer, const std::byte* from, std::byte* alsoTo,
              size_t elements);
  void recvFrom(int peer, std::byte* to, size_t elements);
  void forward(int from, int to, std::byte* alsoTo, size_t elements);
  void recvReduceSend(int from, int to, const std::byte* local,
                      size_t elements);
  // Receives, reduces with local into out, and optionally sends the result on
  // (to >= 0). divide: this is the final result of an avg.
  void recvReduceOut(int from, int to, const std::byte* local, std::byte* out,
                     size_t elements, bool divide);
  // out = out op local (localFirst: local op out), on this rank alone.
  void reduceLocal(const std::byte* local, std::byte* out, size_t elements,
                   bool divide, bool localFirst = false);

 private:
  Step& add(size_t elements);

  transport::Connection* connection(int peer) const;

  const OpArgs& op_;
  const AlgoContext& ctx_;
  std::vector<Step>& steps_;
  size_t elementBytes_;
  // Every step starts as a copy of it: copying is cheaper than building a
  // zeroed step (a string instruction with a slow start) at every call.
  Step prototype_;
};

}  // namespace mcl
