#include "core/init/tune_probe.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <ratio>
#include <string_view>
#include <vector>

#include "algorithms/algorithm_table.h"
#include "base/log.h"
#include "core/run/execute.h"

namespace mcl {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kSmallCalls = 50;
constexpr size_t kCachedProbeBytes = size_t{64} << 10;
constexpr size_t kProbeBytes = size_t{4} << 20;  // past most caches
constexpr int kLargeCalls = 3;
constexpr int kBatches = 5;
// Rates outside these bounds are measurement noise, not a machine.
constexpr double kMinGbps = 0.05;
constexpr double kMaxGbps = 400;

// Microseconds per call of `op` with `algorithm` forced: after as many
// warm-up calls, the median of a few batches.
double timeCalls(mclComm& comm, const OpArgs& op, Collective collective,
                 Algorithm algorithm, int calls) {
  const ForcedAlgorithms saved = comm.context.forced;
  comm.context.forced[static_cast<size_t>(collective)] = algorithm;
  for (int i = 0; i < calls; ++i) executeNow(comm, op);
  std::vector<double> batches;
  for (int batch = 0; batch < kBatches; ++batch) {
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < calls; ++i) executeNow(comm, op);
    batches.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - start)
            .count() /
        calls);
  }
  comm.context.forced = saved;
  std::sort(batches.begin(), batches.end());
  return batches[batches.size() / 2];
}

// The largest of every rank's value: the slowest rank sets the pace.
double slowest(mclComm& comm, double mine) {
  double value = mine;
  OpArgs op;
  op.kind = Collective::AllReduce;
  op.sendbuff = &value;
  op.recvbuff = &value;
  op.count = 1;
  op.type = mclFloat64;
  op.op = mclMax;
  const ForcedAlgorithms saved = comm.context.forced;
  comm.context.forced[static_cast<size_t>(Collective::AllReduce)] =
      Algorithm::Direct;
  executeNow(comm, op);
  comm.context.forced = saved;
  return value;
}

// The rate a ring all-gather of `bytes` reaches: it moves (n-1)/n of them
// through each rank in n-1 hops. Unchanged when it cannot be measured.
void measureRate(mclComm& comm, size_t bytes, double alphaUs, double* gbps) {
  const double nd = comm.nranks;
  std::vector<std::byte> buffer(bytes * 2);
  OpArgs gather;
  gather.kind = Collective::AllGather;
  gather.count = bytes / static_cast<size_t>(comm.nranks);
  gather.sendbuff = buffer.data() + bytes;
  gather.recvbuff = buffer.data();
  gather.type = mclUint8;
  const double moved = double(gather.count) * (nd - 1);
  const double us = slowest(comm, timeCalls(comm, gather, Collective::AllGather,
                                            Algorithm::Ring, kLargeCalls)) -
                    (nd - 1) * alphaUs;
  if (us > 0) *gbps = std::clamp(moved / us / 1e3, kMinGbps, kMaxGbps);
}

}  // namespace

void probeLinkModel(mclComm& comm) {
  const int n = comm.nranks;
  if (n < 2) return;
  LinkModel link = comm.context.link;
  const double nd = n;
  // Hop: an 8-byte ring all-reduce is a chain of 2(n-1) hops, each waiting
  // on the one before (what a call costs whatever its hops rides along:
  // it is part of every hop's price).
  double tiny[2] = {1, 1};
  OpArgs small;
  small.kind = Collective::AllReduce;
  small.sendbuff = &tiny[0];
  small.recvbuff = &tiny[1];
  small.count = 1;
  small.type = mclFloat64;
  const double ringUs =
      slowest(comm, timeCalls(comm, small, Collective::AllReduce,
                              Algorithm::Ring, kSmallCalls));
  link.alphaUs = std::max(0.01, ringUs / (2 * (nd - 1)));
  measureRate(comm, kCachedProbeBytes, link.alphaUs, &link.cachedGbps);
  // Past the model's cache boundary, whatever it is for this link.
  measureRate(comm, std::max(kProbeBytes, 2 * link.cacheBytes), link.alphaUs,
              &link.gbps);
  // Buffers that fit the caches move at least as fast as larger ones.
  link.cachedGbps = std::max(link.cachedGbps, link.gbps);
  if (link.kind == std::string_view("rdma")) {
    // The probe's messages went over every wire of a pair at once; the
    // model multiplies a wire's rate by the wires.
    link.gbps /= link.wires;
    link.cachedGbps /= link.wires;
  }
  comm.context.link = link;
  MCL_LOG(Info, kLogInit,
          "%s: tuner probe (MCL_TUNE_PROBE=1): %.2f us per hop; moves %.2f "
          "GB/s (%.2f in the caches); folding rates are the defaults",
          comm.label().c_str(), link.alphaUs, link.gbps, link.cachedGbps);
}

}  // namespace mcl
