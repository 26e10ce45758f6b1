#include "core/run/execute.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <span>
#include <tuple>
#include <vector>

#include "algorithms/collectives.h"
#include "algorithms/executor.h"
#include "algorithms/tiny_allgather.h"
#include "algorithms/tiny_allreduce.h"
#include "base/error.h"
#include "core/run/call_check.h"

namespace mcl {

namespace {

// The staging copies of the batch so far, kept as the footprint's peak.
void noteStaging(mclComm& comm) {
  if (comm.callScratch.staging.empty()) return;
  uint64_t bytes = 0;
  for (const auto& copy : comm.callScratch.staging) bytes += copy.size();
  uint64_t peak = comm.stagingPeakBytes.load(std::memory_order_relaxed);
  while (bytes > peak && !comm.stagingPeakBytes.compare_exchange_weak(
                             peak, bytes, std::memory_order_relaxed)) {
  }
}

// Stamps op's steps (from `first` on) for messages; every operation takes
// a sequence number, steps or not.
void stampSteps(mclComm& comm, size_t first, const OpArgs& op) {
  uint64_t sequence = comm.nextSequence++;
  for (size_t i = first; i < comm.steps.size(); ++i) {
    comm.steps[i].kind = op.kind;
    comm.steps[i].sequence = sequence;
  }
}

// Appends op's steps to comm.steps and stamps them.
void appendTagged(mclComm& comm, const OpArgs& op) {
  size_t first = comm.steps.size();
  appendSteps(op, comm.context, comm.steps);
  noteStaging(comm);
  stampSteps(comm, first, op);
}

// Runs op on this thread: a tiny all-reduce or all-gather without steps
// when it can.
void runOne(mclComm& comm, const OpArgs& op) {
  const bool tinyReduce = takesTinyAllReduce(op, comm.context);
  if (tinyReduce || takesTinyAllGather(op, comm.context)) {
    const bool done = tinyReduce
                          ? runTinyAllReduce(op, comm.context, comm.steps)
                          : runTinyAllGather(op, comm.context, comm.steps);
    stampSteps(comm, 0, op);
    if (done) return;
    noteStaging(comm);
  } else {
    appendTagged(comm, op);
  }
  Lane lane;
  lane.context = &comm.context;
  lane.steps = comm.steps;
  runLanes({&lane, 1});
}

// MCL_CHECK: the ranks all-gather the fingerprint of `op` through the
// rings and compare; throws on a mismatch, before op moves a byte.
void compareCall(mclComm& comm, const OpArgs& op, uint32_t indexInGroup,
                 uint32_t groupSize) {
  const CallFingerprint mine =
      fingerprintOf(op, comm.checkedCalls++, indexInGroup, groupSize);
  std::vector<CallFingerprint> all(static_cast<size_t>(comm.nranks));
  OpArgs gather;
  gather.kind = Collective::AllGather;
  gather.sendbuff = &mine;
  gather.recvbuff = all.data();
  gather.count = sizeof(mine);
  gather.type = mclUint8;
  gather.ringsOnly = true;
  runOne(comm, gather);
  comm.steps.clear();
  comm.callScratch.staging.clear();
  comm.callScratch.tasks.clear();
  compareFingerprints(all, comm.label());
}

// MCL_CHECK, for the collectives of a batch in call order: each is the
// index-th of its communicator's collectives in the batch.
void compareCalls(const std::vector<PendingOp>& ops) {
  std::map<mclComm*, uint32_t> perComm;
  for (const auto& op : ops)
    if (op.comm->settings.checkCalls && !isPointToPoint(op.args.kind) &&
        op.comm->nranks > 1)
      ++perComm[op.comm];
  std::map<mclComm*, uint32_t> seen;
  for (const auto& op : ops) {
    auto total = perComm.find(op.comm);
    if (total == perComm.end() || isPointToPoint(op.args.kind)) continue;
    compareCall(*op.comm, op.args, seen[op.comm]++, total->second);
  }
}

struct LaneRange {
  mclComm* comm;
  size_t begin;
  size_t end;
};

// Builds the lanes of every op and runs them together.
void runBatch(std::vector<PendingOp>& ops, std::vector<mclComm*>& comms) {
  for (mclComm* c : comms) {
    c->checkRunnable();
    c->steps.clear();
    c->callScratch.staging.clear();
    c->callScratch.tasks.clear();
  }
  compareCalls(ops);
  if (ops.size() == 1) return runOne(*ops[0].comm, ops[0].args);
  // Point-to-point: one lane per (comm, peer, direction), in call order
  // within the lane, as NCCL matches sends and receives.
  std::map<std::tuple<mclComm*, int, bool>, std::vector<const OpArgs*>> p2p;
  for (const auto& op : ops)
    if (isPointToPoint(op.args.kind))
      p2p[{op.comm, op.args.root, op.args.kind == Collective::Send}].push_back(
          &op.args);
  std::vector<LaneRange> ranges;
  for (const auto& [key, list] : p2p) {
    mclComm* c = std::get<0>(key);
    size_t begin = c->steps.size();
    for (const OpArgs* a : list) appendTagged(*c, *a);
    ranges.push_back({c, begin, c->steps.size()});
  }
  for (mclComm* c : comms) {
    size_t begin = c->steps.size();
    for (const auto& op : ops)
      if (op.comm == c && !isPointToPoint(op.args.kind))
        appendTagged(*c, op.args);
    ranges.push_back({c, begin, c->steps.size()});
  }
  // Spans are taken only now: appending may have moved the step vectors.
  std::vector<Lane> lanes;
  for (const auto& r : ranges) {
    Lane lane;
    lane.context = &r.comm->context;
    lane.steps =
        std::span<Step>(r.comm->steps.data() + r.begin, r.end - r.begin);
    lanes.push_back(lane);
  }
  runLanes(lanes);
}

}  // namespace

void issue(Batch& batch) {
  std::vector<mclComm*> comms;
  for (const auto& op : batch.ops) comms.push_back(op.comm);
  std::sort(comms.begin(), comms.end());
  comms.erase(std::unique(comms.begin(), comms.end()), comms.end());
  batch.tickets.clear();
  if (comms.size() == 1) {
    batch.tickets.emplace_back(comms[0], comms[0]->takeTicket());
    return;
  }
  // Batches over several communicators take all their tickets at once, so
  // every communicator sees batches in one global order (no turn cycles).
  static std::mutex multiCommIssue;
  std::lock_guard<std::mutex> lock(multiCommIssue);
  for (mclComm* c : comms) batch.tickets.emplace_back(c, c->takeTicket());
}

void executeNow(mclComm& comm, const OpArgs& op) {
  const uint64_t ticket = comm.takeTicket();
  try {
    comm.waitTurn(ticket);
  } catch (...) {
    comm.skipTurn(ticket);
    throw;
  }
  try {
    comm.checkRunnable();
    comm.steps.clear();
    if (!comm.callScratch.staging.empty()) comm.callScratch.staging.clear();
    if (!comm.callScratch.tasks.empty()) comm.callScratch.tasks.clear();
    if (comm.settings.checkCalls && comm.nranks > 1 && !isPointToPoint(op.kind))
      compareCall(comm, op, 0, 1);
    runOne(comm, op);
  } catch (...) {
    Error e = asError(std::current_exception());
    comm.failAndTellPeers(e.code(), e.what());
    comm.finishTurn();
    throw e;
  }
  comm.finishTurn();
}

void execute(Batch& batch) {
  std::vector<mclComm*> comms;
  size_t waited = 0;
  try {
    for (const auto& [comm, ticket] : batch.tickets) {
      comm->waitTurn(ticket);
      ++waited;
      comms.push_back(comm);
    }
    runBatch(batch.ops, comms);
  } catch (...) {
    Error e = asError(std::current_exception());
    for (mclComm* c : comms) c->failAndTellPeers(e.code(), e.what());
    for (size_t i = 0; i < waited; ++i) batch.tickets[i].first->finishTurn();
    // Turns not yet reached are passed on when they come up.
    for (size_t i = waited; i < batch.tickets.size(); ++i)
      batch.tickets[i].first->skipTurn(batch.tickets[i].second);
    throw e;
  }
  for (mclComm* c : comms) c->finishTurn();
}

}  // namespace mcl
