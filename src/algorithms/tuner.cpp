#include "algorithms/tuner.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include "algorithms/algorithm_table.h"
#include "algorithms/kernels/types.h"
#include "base/error.h"

namespace mcl {

namespace {

// The shape, corrected where measurements disagreed with the plain count
// of hops and bytes for this kind of link.
CostShape measuredShape(const AlgorithmInfo& a, size_t bytes, int nranks,
                        const LinkModel& link) {
  const Collective collective = a.collective;
  const Algorithm algorithm = a.id;
  CostShape s = a.cost(nranks);
  if (algorithm == Algorithm::HalvingDoubling && bytes > link.cacheBytes &&
      nranks > 2) {
    // Its first exchanges move half the buffer at once, where the ring
    // spreads the same bytes over n-1 steps: out of the caches that costs.
    s.sent *= 1.3;
    s.reduced *= 1.3;
  }
  if (algorithm == Algorithm::Tree && collective == Collective::AllReduce &&
      link.crowded && link.kind == std::string_view("tcp")) {
    // Four hosts (namespaces) on 2 cores over TCP: the double binary tree
    // beat the ring at every size from 2 to 64 MiB (by 1-46 %). With the
    // cores crowded, what counts is the bytes all ranks of a machine push
    // through its TCP stack, on average per rank the ring's (2(n-1)/n
    // sent, (n-1)/n folded), and a waiting rank's core serves the others,
    // so the pipeline fills for free. (Below 1 MiB halving-doubling still
    // wins: fewer hops.)
    s.sent = 2 * (nranks - 1.0) / nranks;
    s.reduced = (nranks - 1.0) / nranks;
    s.fillHops = 0;
  }
  if (algorithm == Algorithm::Ring && collective == Collective::AllReduce &&
      link.kind == std::string_view("shm")) {
    // The step that completes a block folds it into the outgoing slot and
    // copies it out: one more pass over a rank's own block. With two ranks
    // the plain count makes the ring and halving-doubling equal, and
    // halving-doubling measured ahead from 8 KiB to 32 MiB (float and bf16,
    // by 4-25 % from 16 to 256 KiB: perf/tune/algo_sweep.py, 2026-12-02).
    s.sent += 1.0 / nranks;
  }
  return s;
}

}  // namespace

LinkModel defaultLinkModel(std::string_view kind, bool crowded) {
  LinkModel m;
  if (kind == "tcp") {
    // Folding runs at memory speed whatever brought the bytes: two ranks
    // over loopback measured direct (folds all) level with the ring (folds
    // half, one more hop) up to 256 KiB, which puts the fold near 10 GB/s.
    m = {"tcp", 8.5, 1.3, 10.0, 1.3, 10.0, m.cacheBytes};
  } else if (kind == "emulated rdma") {
    m = {"emulated rdma", 3.0, 1.3, 10.0, 1.3, 10.0, m.cacheBytes};
  } else if (kind == "rdma") {
    // Thunderbolt 5 RDMA as reported (3.5-7.6 GB/s, single-digit
    // microseconds); not measured by mcl yet.
    m = {"rdma", 5.0, 6.0, 10.0, 6.0, 10.0, m.cacheBytes};
  }
  m.crowded = crowded;
  if (crowded) {
    // Every hop waits for a context switch; buffers that fit the caches
    // move fast between the ranks that share them, larger ones crawl.
    // Measured with 4 ranks on 2 cores: about 2.4 us a hop over shared
    // memory, 6.5 on the emulated fabric (frames, credits), 45 over TCP
    // (the wake-ups of socket reads add up).
    const std::string_view k = m.kind;
    if (k == "shm") {
      // Bytes cost as much in the caches as past them: from 4 to 32 KiB
      // the direct all-reduce grew 2.1 us per KiB, halving-doubling 0.6,
      // ranks waiting their turn for a core in between (a day earlier,
      // direct led to 8 KiB; this puts the switch at 6 KiB).
      m.alphaUs = 2.4;
      m.cachedGbps = m.cachedReduceGbps = m.gbps = m.reduceGbps = 5.0;
      // Halving-doubling's large first exchanges (priced dearer past the
      // caches) measured best up to 8 MiB, the ring from 16 MiB.
      m.cacheBytes = size_t{8} << 20;
    } else if (k == "tcp") {
      m.alphaUs = 45.0;
      m.gbps = std::min(m.gbps, 1.0);
      // As fitted on four hosts in namespaces.
      m.cachedReduceGbps = m.reduceGbps = 3.0;
    } else if (k == "emulated rdma") {
      // Every frame is copied by a CPU that another rank waits for: from
      // 4 to 16 KiB the direct all-reduce (three copies out, three folds)
      // grew 3.4 us per KiB, halving-doubling 0.5.
      m.alphaUs = 6.5;
      m.cachedGbps = m.cachedReduceGbps = m.reduceGbps = 3.0;
    } else {
      m.alphaUs = std::max(m.alphaUs, 6.5);  // a context switch per hop
    }
  }
  return m;
}

double predictUs(Collective collective, Algorithm algorithm, size_t bytes,
                 int nranks, size_t chunkBytes, const LinkModel& link) {
  const bool cached = bytes <= link.cacheBytes;
  // Doubled cables carry twice the bytes; not on the emulated fabric, where
  // one CPU copies every frame whatever the wire.
  const double wires =
      link.kind == std::string_view("rdma") ? std::max(1, link.wires) : 1;
  const double bytesPerUs =
      (cached ? link.cachedGbps : link.gbps) * 1e3 * wires;
  const double foldsPerUs =
      (cached ? link.cachedReduceGbps : link.reduceGbps) * 1e3;
  const double b = static_cast<double>(bytes);
  if (nranks <= 1) return b / bytesPerUs;
  const AlgorithmInfo* a = findAlgorithm(collective, algorithm);
  if (a == nullptr)
    throw error(mclInternalError, "%s has no algorithm %s to price",
                collectiveName(collective), algorithmName(algorithm));
  const CostShape s = measuredShape(*a, bytes, nranks, link);
  const double chunk = std::min(b, static_cast<double>(chunkBytes));
  return s.hops * link.alphaUs + s.sent * b / bytesPerUs +
         s.reduced * b / foldsPerUs + s.fillHops * chunk / bytesPerUs;
}

size_t operationBytes(Collective collective, const OpArgs& op, int nranks) {
  const size_t bytes = op.count * kernels::typeSize(op.type);
  if (collective == Collective::AllGather ||
      collective == Collective::ReduceScatter ||
      collective == Collective::AllToAll)
    return bytes * static_cast<size_t>(nranks);
  return bytes;
}

namespace {

Algorithm cheapest(Collective collective, size_t bytes,
                   const AlgoContext& ctx) {
  Algorithm best = Algorithm::Auto;
  double bestUs = std::numeric_limits<double>::infinity();
  for (const AlgorithmInfo& a : algorithmTable()) {
    if (a.collective != collective) continue;
    const double us = predictUs(collective, a.id, bytes, ctx.nranks,
                                ctx.maxStepBytes, ctx.link);
    // Ties go to the earlier entry of the table.
    if (us < bestUs) {
      best = a.id;
      bestUs = us;
    }
  }
  return best;
}

}  // namespace

Algorithm tunedAlgorithm(Collective collective, const OpArgs& op,
                         const AlgoContext& ctx) {
  const size_t bytes = operationBytes(collective, op, ctx.nranks);
  // 56 bits of size, 4 of collective, 4 of algorithm (Auto = 0: empty).
  const uint64_t key = (uint64_t(bytes) << 8) | (uint64_t(collective) << 4);
  if (bytes >> 56 == 0 && ctx.tunerCache) {
    std::atomic<uint64_t>& slot =
        ctx.tunerCache
            ->entries[(bytes * 0x9E3779B97F4A7C15ull + uint64_t(collective)) >>
                      58];
    const uint64_t seen = slot.load(std::memory_order_relaxed);
    if ((seen & ~uint64_t{0xf}) == key && (seen & 0xf) != 0)
      return static_cast<Algorithm>(seen & 0xf);
    const Algorithm a = cheapest(collective, bytes, ctx);
    slot.store(key | uint64_t(a), std::memory_order_relaxed);
    return a;
  }
  return cheapest(collective, bytes, ctx);
}

}  // namespace mcl
