// What algorithms know of a communicator: ranks, one connection per peer,
// how to wait, and when to give up (AlgoContext, which core fills at init
// and algorithms only read: they get it const), and the scratch the steps
// of one batch write (CallScratch, reached through the context).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "algorithms/algorithm.h"
#include "algorithms/shared_buffers.h"
#include "algorithms/step.h"
#include "transports/transport.h"

namespace mcl {

struct WaitPolicy {
  int64_t spinNs = 20000;    // busy-poll this long after the last progress
  int64_t yieldNs = 200000;  // then yield the CPU this long, then sleep
  // A spin budget this short says the ranks outnumber the cores (settings
  // choose 2 us then, 100 by default): a peer waited on may need this core.
  bool crowded() const { return spinNs < 10000; }
};

// What the tuner knows of the links a communicator's collectives cross: the
// slowest kind among its pairs of ranks, with the cost of one message hop
// (software included), the bytes per second a rank moves over it, and the
// bytes per second a rank folds into a result: two of each, for buffers
// that stay in the caches (up to cacheBytes) and for larger ones.
struct LinkModel {
  const char* kind = "shm";  // shm, tcp, rdma, emulated rdma
  double alphaUs = 0.1;
  double gbps = 8.0;
  double reduceGbps = 10.0;
  double cachedGbps = 8.0;
  double cachedReduceGbps = 10.0;
  size_t cacheBytes = size_t{1} << 20;
  // Some machine runs more ranks than it has cores: a rank that waits for
  // a peer's answer waits for a context switch.
  bool crowded = false;
  // The fewest wires (cables) between two ranks joined over RDMA: a
  // message is striped over all of them, so their bandwidth adds up.
  int wires = 1;
};

// The tuner's recent answers, keyed by collective and size: a training loop
// asks about the same few sizes over and over, and a prediction costs more
// than a small message's whole all-reduce. Entries are atomic words (size,
// collective and algorithm packed), so the API may ask from any thread.
struct TunerCache {
  std::array<std::atomic<uint64_t>, 64> entries{};
};

// What the steps of the batch being built write, cleared per batch.
struct CallScratch {
  // Room for barrier's one-byte all-reduce.
  std::byte barrierBytes[2] = {};
  // Copies of inputs, for algorithms that need them after writing the
  // output in place (the direct all-reduce of small buffers), and staged
  // inputs (PreMulSum): one buffer per operation (a deque: earlier buffers
  // stay put while later ones are added).
  std::deque<std::vector<std::byte>> staging;
  // The zero-copy steps' programs.
  std::deque<std::shared_ptr<StepTask>> tasks;
};

struct AlgoContext {
  int rank = 0;
  int nranks = 1;
  std::vector<transport::Connection*> peers;  // by rank, self included
  // Point-to-point has connections of its own: its bytes never mix with a
  // collective's, so a group can run both at once.
  std::vector<transport::Connection*> p2pPeers;
  transport::Waker* waker = nullptr;
  std::chrono::nanoseconds timeout{std::chrono::seconds(300)};
  WaitPolicy wait;
  const std::atomic<bool>* aborted = nullptr;
  // The side channel's word on each peer's process; null: links only.
  transport::PeerHealth* health = nullptr;
  // The most one ring step may send before the next step receives: half of
  // the smallest buffer between two ranks (the same on every rank).
  size_t maxStepBytes = 256 * 1024;
  // The communicator's scratch for the batch being built: the one thing
  // algorithms write, through this pointer from a const context.
  CallScratch* call = nullptr;
  // Set when every rank is on this host over shared memory: calls of at
  // least zeroCopyMinBytes then try to run in place on mclMemAlloc memory.
  SharedBufferMap* sharedBuffers = nullptr;
  // Every peer is on this host, over shared memory.
  bool allShm = false;
  size_t zeroCopyMinBytes = size_t{64} << 10;
  // MCL_ALGO: the algorithm each collective must use, Auto where the tuner
  // chooses.
  ForcedAlgorithms forced{};
  LinkModel link;  // the tuner's model; the same on every rank
  std::shared_ptr<TunerCache> tunerCache = std::make_shared<TunerCache>();
};

}  // namespace mcl
