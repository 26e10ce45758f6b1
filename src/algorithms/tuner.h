// The tuner: which algorithm a collective uses when MCL_ALGO leaves the
// choice to it. An alpha-beta model: each algorithm costs its message hops
// on the critical path times the link's per-hop latency, plus the bytes one
// rank moves (per byte of the operation) over the link's bandwidth, plus
// the store-and-forward of one chunk per hop for pipelines. The inputs are
// the same on every rank, so every rank picks the same algorithm.
#pragma once

#include <cstddef>
#include <string_view>

#include "algorithms/algorithm.h"
#include "algorithms/context.h"
#include "algorithms/op.h"

namespace mcl {

// Defaults per kind of link, fitted to `mcl-perf --algo all` on the 2-core
// CI machine (per-hop latency with the adaptive wait, bandwidth with the
// copies a rank makes); `crowded`: more ranks than cores on some host, so
// every hop waits for a context switch. MCL_TUNE_PROBE=1 measures instead.
LinkModel defaultLinkModel(std::string_view kind, bool crowded);

// Predicted microseconds of `algorithm` for a call moving `bytes` (the
// larger of the send and receive buffer of one rank), among nranks, with
// pipelines cut into chunks of `chunkBytes`.
double predictUs(Collective collective, Algorithm algorithm, size_t bytes,
                 int nranks, size_t chunkBytes, const LinkModel& link);

// The bytes one rank's buffer of `op` spans, as predictUs takes them.
size_t operationBytes(Collective collective, const OpArgs& op, int nranks);

Algorithm tunedAlgorithm(Collective collective, const OpArgs& op,
                         const AlgoContext& ctx);

}  // namespace mcl
