// Live communicator and stream handles. A handle is a token, never the
// object's address: a destroyed handle stays invalid even when a new
// communicator reuses the memory. The C API resolves every handle here, so a
// destroyed or made-up handle gets mclInvalidArgument rather than a crash,
// and destruction waits for the calls still inside.
#pragma once

#include <mcl/mcl.h>

#include <memory>

#include "core/comm/comm.h"
#include "core/comm/pending_init.h"

struct mclStream;

namespace mcl {

mclComm_t registerComm(std::unique_ptr<mclComm> comm);
// Removes the handle (later calls with it fail) and returns the object.
mclComm* unregisterComm(mclComm_t handle);

// A handle for a communicator still being initialised (pending_init.h).
// Once its init has built it, the first call that resolves the handle
// makes it a live communicator's (same handle).
mclComm_t registerPending(std::shared_ptr<PendingInit> init);
// The init behind a handle that has no live communicator yet; null for a
// live communicator's handle (after making it live when it was built).
// Throws mclInvalidArgument when the handle is not known at all.
std::shared_ptr<PendingInit> pendingOf(mclComm_t handle);
// Removes a pending handle and returns its init (null when it has none).
std::shared_ptr<PendingInit> unregisterPending(mclComm_t handle);

// Holds a live communicator for the length of one API call.
class CommRef {
 public:
  // Throws mclInvalidArgument when handle is NULL, destroyed or unknown;
  // mclInvalidUsage while its init is in progress, and the init's error
  // when it failed.
  explicit CommRef(mclComm_t handle);
  ~CommRef();
  CommRef(const CommRef&) = delete;
  CommRef& operator=(const CommRef&) = delete;
  mclComm* operator->() const { return comm_; }
  mclComm& operator*() const { return *comm_; }
  mclComm* get() const { return comm_; }

 private:
  mclComm* comm_;
};

mclStream_t registerStream(mclStream* stream);
// Removes the handle and returns the object, or null when it was not live.
mclStream* unregisterStream(mclStream_t handle);
// The stream behind a handle (null for the NULL stream); throws
// mclInvalidArgument when the handle is not live.
mclStream* resolveStream(mclStream_t handle);

}  // namespace mcl
