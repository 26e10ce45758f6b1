#include "core/run/group.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "core/comm/handle_registry.h"
#include "core/run/stream.h"

namespace mcl {

namespace {

struct DeferredInit {
  std::shared_ptr<PendingInit> init;
  std::function<void()> undo;
};

struct GroupState {
  int depth = 0;
  std::vector<DeferredInit> inits;
  std::vector<PendingOp> ops;
  std::vector<mclComm_t> handles;  // of each op, re-checked at the end
  mclStream_t stream = nullptr;
  mclResult_t poison = mclSuccess;
  std::string poisonMessage;
};

thread_local GroupState tlsGroup;

void resetGroup() {
  tlsGroup.inits.clear();
  tlsGroup.ops.clear();
  tlsGroup.handles.clear();
  tlsGroup.stream = nullptr;
  tlsGroup.poison = mclSuccess;
  tlsGroup.poisonMessage.clear();
}

}  // namespace

bool inGroup() { return tlsGroup.depth > 0; }

void groupStart() { ++tlsGroup.depth; }

void groupPoison(mclResult_t code, const std::string& message) {
  if (inGroup() && tlsGroup.poison == mclSuccess) {
    tlsGroup.poison = code;
    tlsGroup.poisonMessage = message;
  }
}

void groupDefer(std::shared_ptr<PendingInit> init, std::function<void()> undo) {
  tlsGroup.inits.push_back({std::move(init), std::move(undo)});
}

namespace {

// The group's inits once they are started: waits for the blocking ones
// (each bounded by its own timeout); the first failure is thrown.
mclResult_t awaitInits(const std::vector<DeferredInit>& inits) {
  const DeferredInit* failed = nullptr;
  bool underWay = false;
  for (const DeferredInit& d : inits) {
    if (d.init->blocking()) d.init->waitEnded();
    PendingInit::State state = d.init->state();
    if (state == PendingInit::State::Failed && failed == nullptr) failed = &d;
    underWay |= state == PendingInit::State::Running;
  }
  if (failed != nullptr)
    throw Error(failed->init->code(),
                failed->init->what() + ": " + failed->init->message());
  return underWay ? mclInProgress : mclSuccess;
}

void runOps(std::vector<PendingOp> ops, const std::vector<mclComm_t>& handles,
            mclStream_t streamHandle);

}  // namespace

mclResult_t groupEnd() {
  if (tlsGroup.depth == 0)
    throw error(mclInvalidUsage, "mclGroupEnd without mclGroupStart");
  if (--tlsGroup.depth > 0) return mclSuccess;
  std::vector<DeferredInit> inits = std::move(tlsGroup.inits);
  std::vector<PendingOp> ops = std::move(tlsGroup.ops);
  std::vector<mclComm_t> handles = std::move(tlsGroup.handles);
  mclStream_t streamHandle = tlsGroup.stream;
  mclResult_t poison = tlsGroup.poison;
  std::string poisonMessage = tlsGroup.poisonMessage;
  resetGroup();
  if (poison != mclSuccess) {
    const std::string why =
        "the group was not run because one of its calls failed: " +
        poisonMessage;
    for (DeferredInit& d : inits) {
      d.init->failUnstarted(poison, why);
      if (d.undo) d.undo();
    }
    throw Error(poison, why);
  }
  // The inits first: the group's operations are on other communicators,
  // and may need ranks these inits' peers are.
  for (DeferredInit& d : inits) d.init->start();
  if (!ops.empty()) runOps(std::move(ops), handles, streamHandle);
  return awaitInits(inits);
}

namespace {

void runOps(std::vector<PendingOp> ops, const std::vector<mclComm_t>& handles,
            mclStream_t streamHandle) {
  mclStream* stream = resolveStream(streamHandle);
  // Hold every communicator while the group runs or is queued.
  std::vector<std::unique_ptr<CommRef>> refs;
  for (size_t i = 0; i < ops.size(); ++i) {
    refs.push_back(std::make_unique<CommRef>(handles[i]));
    ops[i].comm = refs.back()->get();
    ops[i].comm->checkUsable();
  }
  Batch batch;
  batch.ops = std::move(ops);
  issue(batch);
  if (stream == nullptr) {
    execute(batch);
  } else {
    stream->enqueue(std::move(batch));
  }
}

}  // namespace

void submit(mclComm_t handle, mclComm* comm, const OpArgs& op,
            mclStream_t streamHandle) {
  mclStream* stream = resolveStream(streamHandle);
  if (inGroup()) {
    if (!tlsGroup.ops.empty() && tlsGroup.stream != streamHandle)
      throw error(mclInvalidUsage,
                  "all operations of a group must use the same stream");
    tlsGroup.stream = streamHandle;
    tlsGroup.ops.push_back({comm, op});
    tlsGroup.handles.push_back(handle);
    return;
  }
  if (stream == nullptr) {
    executeNow(*comm, op);  // the common case: nothing to allocate
    return;
  }
  Batch batch;
  batch.ops.push_back({comm, op});
  issue(batch);
  stream->enqueue(std::move(batch));
}

}  // namespace mcl
