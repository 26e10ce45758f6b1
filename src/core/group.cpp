#include "core/group.h"

#include "base/error.h"
#include "core/handle_registry.h"
#include "core/stream.h"

namespace mcl {

namespace {

struct GroupState {
  int depth = 0;
  std::vector<PendingOp> ops;
  mclStream* stream = nullptr;
  mclResult_t poison = mclSuccess;
  std::string poisonMessage;
};

thread_local GroupState tlsGroup;

void resetGroup() {
  tlsGroup.ops.clear();
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
  mclStream* stream = tlsGroup.stream;
  mclResult_t poison = tlsGroup.poison;
  std::string poisonMessage = tlsGroup.poisonMessage;
  resetGroup();
  if (poison != mclSuccess)
    throw Error(poison,
                "the group was not run because one of its calls "
                "failed: " +
                    poisonMessage);
  if (ops.empty()) return;
  // Hold every communicator while the group runs or is queued.
  std::vector<std::unique_ptr<CommRef>> refs;
  for (const auto& op : ops) refs.push_back(std::make_unique<CommRef>(op.comm));
  if (stream == nullptr) {
    executeOps(ops);
  } else {
    checkStream(stream);
    stream->enqueue(std::move(ops));
  }
}

void submit(mclComm* comm, const OpArgs& op, mclStream* stream) {
  checkStream(stream);
  if (inGroup()) {
    if (!tlsGroup.ops.empty() && tlsGroup.stream != stream)
      throw error(mclInvalidUsage,
                  "all operations of a group must use the same stream");
    tlsGroup.stream = stream;
    tlsGroup.ops.push_back({comm, op});
    return;
  }
  if (stream == nullptr) {
    executeOne(*comm, op);
  } else {
    stream->enqueue({{comm, op}});
  }
}

}  // namespace mcl
