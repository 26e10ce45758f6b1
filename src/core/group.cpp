#include "core/group.h"

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "core/handle_registry.h"
#include "core/stream.h"

namespace mcl {

namespace {

struct GroupState {
  int depth = 0;
  std::vector<PendingOp> ops;
  std::vector<mclComm_t> handles;  // of each op, re-checked at the end
  mclStream_t stream = nullptr;
  mclResult_t poison = mclSuccess;
  std::string poisonMessage;
};

thread_local GroupState tlsGroup;

void resetGroup() {
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

void groupEnd() {
  if (tlsGroup.depth == 0)
    throw error(mclInvalidUsage, "mclGroupEnd without mclGroupStart");
  if (--tlsGroup.depth > 0) return;
  std::vector<PendingOp> ops = std::move(tlsGroup.ops);
  std::vector<mclComm_t> handles = std::move(tlsGroup.handles);
  mclStream_t streamHandle = tlsGroup.stream;
  mclResult_t poison = tlsGroup.poison;
  std::string poisonMessage = tlsGroup.poisonMessage;
  resetGroup();
  if (poison != mclSuccess)
    throw Error(poison,
                "the group was not run because one of its calls "
                "failed: " +
                    poisonMessage);
  if (ops.empty()) return;
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
