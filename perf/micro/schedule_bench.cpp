// The CPU cost of turning one collective call into this rank's steps
// (appendSteps): paid on every call, before a byte moves, so it bounds the
// latency of small collectives. Per algorithm, rank count and size; "auto"
// includes the tuner's choice (its per-communicator cache is warm after
// the first call, as in a training loop).
#include <benchmark/benchmark.h>
#include <mcl/mcl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "algorithms/collectives.h"
#include "algorithms/context.h"
#include "transports/transport.h"

namespace {

// Building steps never moves data: a connection that holds none will do.
class IdleConnection : public mcl::transport::Connection {
 public:
  std::span<std::byte> acquireSend(size_t) override { return {}; }
  void commitSend(size_t) override {}
  std::span<const std::byte> peekRecv() override { return {}; }
  void releaseRecv(size_t) override {}
  bool peerAlive() const override { return true; }
  const char* linkName() const override { return "idle"; }
};

struct Rank {
  std::vector<std::unique_ptr<IdleConnection>> connections;
  mcl::AlgoContext ctx;
  mcl::CallScratch scratch;

  Rank(int nranks, mcl::Algorithm forced) {
    ctx.call = &scratch;
    ctx.rank = 0;
    ctx.nranks = nranks;
    for (int r = 0; r < nranks; ++r)
      connections.push_back(std::make_unique<IdleConnection>());
    for (const auto& c : connections) ctx.peers.push_back(c.get());
    ctx.p2pPeers = ctx.peers;
    ctx.forced.fill(mcl::Algorithm::Auto);
    ctx.forced[size_t(mcl::Collective::AllReduce)] = forced;
  }
};

void allReduceSteps(benchmark::State& state, mcl::Algorithm algorithm) {
  const int nranks = int(state.range(0));
  const size_t count = size_t(state.range(1)) / sizeof(float);
  Rank rank(nranks, algorithm);
  std::vector<float> send(count), recv(count);
  mcl::OpArgs op;
  op.kind = mcl::Collective::AllReduce;
  op.sendbuff = send.data();
  op.recvbuff = recv.data();
  op.count = count;
  op.type = mclFloat32;
  op.op = mclSum;
  std::vector<mcl::Step> steps;
  size_t stepCount = 0;
  for (auto _ : state) {
    steps.clear();
    rank.scratch.staging.clear();
    mcl::appendSteps(op, rank.ctx, steps);
    stepCount = steps.size();
    benchmark::DoNotOptimize(steps.data());
  }
  state.counters["steps"] = double(stepCount);
}

void scheduleShapes(benchmark::internal::Benchmark* b) {
  for (int nranks : {2, 4, 8})
    for (int64_t bytes : {8, 64 << 10, 64 << 20}) b->Args({nranks, bytes});
}

BENCHMARK_CAPTURE(allReduceSteps, auto, mcl::Algorithm::Auto)
    -> Apply(scheduleShapes);
BENCHMARK_CAPTURE(allReduceSteps, ring, mcl::Algorithm::Ring)
    ->Apply(scheduleShapes);
BENCHMARK_CAPTURE(allReduceSteps, tree, mcl::Algorithm::Tree)
    ->Apply(scheduleShapes);
BENCHMARK_CAPTURE(allReduceSteps, direct, mcl::Algorithm::Direct)
    ->Apply(scheduleShapes);
BENCHMARK_CAPTURE(allReduceSteps, halving_doubling,
                  mcl::Algorithm::HalvingDoubling)
    ->Apply(scheduleShapes);

}  // namespace
