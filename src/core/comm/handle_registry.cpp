#include "core/comm/handle_registry.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "base/error.h"

namespace mcl {

namespace {

struct Registry {
  std::mutex mutex;
  uintptr_t nextToken = 1;
  std::map<uintptr_t, mclComm*> comms;  // ordered: no division per lookup
  std::map<uintptr_t, std::shared_ptr<PendingInit>> pending;
  std::map<uintptr_t, mclStream*> streams;

  // Tokens look like aligned pointers and are never reused.
  uintptr_t newToken() { return (nextToken++) << 4; }
};

// Never destroyed: handles may be released from atexit paths.
Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

uintptr_t tokenOf(const void* handle) {
  return reinterpret_cast<uintptr_t>(handle);
}

}  // namespace

mclComm_t registerComm(std::unique_ptr<mclComm> comm) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  uintptr_t token = registry().newToken();
  registry().comms[token] = comm.release();
  return reinterpret_cast<mclComm_t>(token);
}

mclComm* unregisterComm(mclComm_t handle) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  auto it = registry().comms.find(tokenOf(handle));
  if (it == registry().comms.end()) return nullptr;
  mclComm* comm = it->second;
  registry().comms.erase(it);
  return comm;
}

namespace {

[[noreturn]] void throwUnknown(mclComm_t handle) {
  throw error(mclInvalidArgument,
              "comm %p is not a live communicator (destroyed, aborted or "
              "never initialised)",
              static_cast<void*>(handle));
}

// The live communicator of a handle, making a built pending one live
// (registry lock held); null when the handle is pending still or failed.
mclComm* liveLocked(uintptr_t token) {
  Registry& r = registry();
  auto it = r.comms.find(token);
  if (it != r.comms.end()) return it->second;
  auto p = r.pending.find(token);
  if (p == r.pending.end() || p->second->state() != PendingInit::State::Built)
    return nullptr;
  std::unique_ptr<mclComm> comm = p->second->take();
  r.pending.erase(p);
  if (!comm) return nullptr;
  return r.comms[token] = comm.release();
}

}  // namespace

mclComm_t registerPending(std::shared_ptr<PendingInit> init) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  uintptr_t token = registry().newToken();
  registry().pending[token] = std::move(init);
  return reinterpret_cast<mclComm_t>(token);
}

std::shared_ptr<PendingInit> pendingOf(mclComm_t handle) {
  if (handle == nullptr) throw error(mclInvalidArgument, "comm is NULL");
  std::lock_guard<std::mutex> lock(registry().mutex);
  if (liveLocked(tokenOf(handle)) != nullptr) return nullptr;
  auto p = registry().pending.find(tokenOf(handle));
  if (p == registry().pending.end()) throwUnknown(handle);
  return p->second;
}

std::shared_ptr<PendingInit> unregisterPending(mclComm_t handle) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  auto p = registry().pending.find(tokenOf(handle));
  if (p == registry().pending.end()) return nullptr;
  std::shared_ptr<PendingInit> init = std::move(p->second);
  registry().pending.erase(p);
  return init;
}

CommRef::CommRef(mclComm_t handle) : comm_(nullptr) {
  if (handle == nullptr) throw error(mclInvalidArgument, "comm is NULL");
  std::lock_guard<std::mutex> lock(registry().mutex);
  comm_ = liveLocked(tokenOf(handle));
  if (comm_ == nullptr) {
    auto p = registry().pending.find(tokenOf(handle));
    if (p == registry().pending.end()) throwUnknown(handle);
    const PendingInit& init = *p->second;
    if (init.state() == PendingInit::State::Failed)
      throw error(init.code(),
                  "comm %p: its initialisation failed (destroy it): %s",
                  static_cast<void*>(handle), init.message().c_str());
    throw error(mclInvalidUsage,
                "comm %p is still being initialised (%s; non-blocking or "
                "in a group): poll mclCommGetAsyncError until it gives "
                "mclSuccess",
                static_cast<void*>(handle), init.what().c_str());
  }
  comm_->activeCalls.fetch_add(1, std::memory_order_acq_rel);
}

CommRef::~CommRef() {
  comm_->activeCalls.fetch_sub(1, std::memory_order_acq_rel);
}

mclStream_t registerStream(mclStream* stream) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  uintptr_t token = registry().newToken();
  registry().streams[token] = stream;
  return reinterpret_cast<mclStream_t>(token);
}

mclStream* unregisterStream(mclStream_t handle) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  auto it = registry().streams.find(tokenOf(handle));
  if (it == registry().streams.end()) return nullptr;
  mclStream* stream = it->second;
  registry().streams.erase(it);
  return stream;
}

mclStream* resolveStream(mclStream_t handle) {
  if (handle == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(registry().mutex);
  auto it = registry().streams.find(tokenOf(handle));
  if (it == registry().streams.end())
    throw error(mclInvalidArgument,
                "stream %p is not a live stream (destroyed or never created)",
                static_cast<void*>(handle));
  return it->second;
}

}  // namespace mcl
