// Live communicator and stream handles. The C API checks every handle here,
// so a destroyed or never-initialised handle gets mclInvalidArgument rather
// than a crash, and destruction waits for calls still inside.
#pragma once

#include <mcl/mcl.h>

#include "core/comm.h"

namespace mcl {

void registerComm(mclComm* comm);
// Removes the handle; later calls with it fail. False if it was not live.
bool unregisterComm(mclComm* comm);

// Holds a live communicator for the length of one API call.
class CommRef {
 public:
  // Throws mclInvalidArgument when comm is NULL, destroyed or unknown.
  explicit CommRef(mclComm* comm);
  ~CommRef();
  CommRef(const CommRef&) = delete;
  CommRef& operator=(const CommRef&) = delete;
  mclComm* operator->() const { return comm_; }
  mclComm& operator*() const { return *comm_; }
  mclComm* get() const { return comm_; }

 private:
  mclComm* comm_;
};

void registerStream(mclStream* stream);
bool unregisterStream(mclStream* stream);
// Throws mclInvalidArgument when stream is not live.
void checkStream(mclStream* stream);

}  // namespace mcl
