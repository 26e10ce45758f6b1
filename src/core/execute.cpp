#include "core/execute.h"

#include <algorithm>
#include <map>

#include "algorithms/collectives.h"
#include "algorithms/executor.h"
#include "base/error.h"

namespace mcl {

namespace {

// Appends op's steps to comm.steps and stamps them for messages.
void appendTagged(mclComm& comm, const OpArgs& op) {
  size_t first = comm.steps.size();
  appendSteps(op, comm.context, comm.steps);
  uint64_t sequence = comm.nextSequence++;
  for (size_t i = first; i < comm.steps.size(); ++i) {
    comm.steps[i].kind = op.kind;
    comm.steps[i].sequence = sequence;
  }
}

void failAll(const std::vector<mclComm*>& comms, const Error& e) {
  for (mclComm* c : comms) c->fail(e.code(), e.what());
}

struct LaneRange {
  mclComm* comm;
  size_t begin;
  size_t end;
};

}  // namespace

void executeOne(mclComm& comm, const OpArgs& op) {
  std::lock_guard<std::mutex> lock(comm.execMutex);
  comm.checkRunnable();
  comm.steps.clear();
  appendTagged(comm, op);
  Lane lane;
  lane.context = &comm.context;
  lane.steps = comm.steps;
  try {
    runLanes({&lane, 1});
  } catch (const Error& e) {
    comm.fail(e.code(), e.what());
    throw;
  }
}

void executeOps(std::vector<PendingOp>& ops) {
  if (ops.size() == 1) return executeOne(*ops[0].comm, ops[0].args);
  // Lock every communicator involved, in address order (no lock cycles).
  std::vector<mclComm*> comms;
  for (const auto& op : ops) comms.push_back(op.comm);
  std::sort(comms.begin(), comms.end());
  comms.erase(std::unique(comms.begin(), comms.end()), comms.end());
  std::vector<std::unique_lock<std::mutex>> locks;
  for (mclComm* c : comms) {
    locks.emplace_back(c->execMutex);
    c->checkRunnable();
    c->steps.clear();
  }

  // Point-to-point: one lane per (comm, peer, direction), in call order
  // within the lane, as NCCL matches sends and receives.
  std::map<std::tuple<mclComm*, int, bool>, std::vector<const OpArgs*>> p2p;
  for (const auto& op : ops)
    if (isPointToPoint(op.args.kind))
      p2p[{op.comm, op.args.root, op.args.kind == OpKind::Send}].push_back(
          &op.args);
  std::vector<LaneRange> ranges;
  for (const auto& [key, list] : p2p) {
    mclComm* c = std::get<0>(key);
    size_t begin = c->steps.size();
    for (const OpArgs* a : list) appendTagged(*c, *a);
    ranges.push_back({c, begin, c->steps.size()});
  }
  size_t p2pLanes = ranges.size();
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
  try {
    runLanes(std::span<Lane>(lanes.data(), p2pLanes));
    runLanes(std::span<Lane>(lanes.data() + p2pLanes, lanes.size() - p2pLanes));
  } catch (const Error& e) {
    failAll(comms, e);
    throw;
  }
}

}  // namespace mcl
