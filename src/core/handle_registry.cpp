#include "core/handle_registry.h"

#include <mutex>
#include <unordered_set>

#include "base/error.h"

namespace mcl {

namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_set<mclComm*> comms;
  std::unordered_set<mclStream*> streams;
};

// Never destroyed: handles may be released from atexit paths.
Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

}  // namespace

void registerComm(mclComm* comm) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().comms.insert(comm);
}

bool unregisterComm(mclComm* comm) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  return registry().comms.erase(comm) > 0;
}

CommRef::CommRef(mclComm* comm) : comm_(comm) {
  if (comm == nullptr) throw error(mclInvalidArgument, "comm is NULL");
  std::lock_guard<std::mutex> lock(registry().mutex);
  if (registry().comms.count(comm) == 0)
    throw error(mclInvalidArgument,
                "comm %p is not a live communicator (destroyed, aborted or "
                "never initialised)",
                static_cast<void*>(comm));
  comm->activeCalls.fetch_add(1, std::memory_order_acq_rel);
}

CommRef::~CommRef() {
  comm_->activeCalls.fetch_sub(1, std::memory_order_acq_rel);
}

void registerStream(mclStream* stream) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().streams.insert(stream);
}

bool unregisterStream(mclStream* stream) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  return registry().streams.erase(stream) > 0;
}

void checkStream(mclStream* stream) {
  if (stream == nullptr) return;
  std::lock_guard<std::mutex> lock(registry().mutex);
  if (registry().streams.count(stream) == 0)
    throw error(mclInvalidArgument,
                "stream %p is not a live stream (destroyed or never created)",
                static_cast<void*>(stream));
}

}  // namespace mcl
