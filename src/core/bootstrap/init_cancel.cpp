#include "core/bootstrap/init_cancel.h"

#include <sys/socket.h>

#include <mutex>

#include "base/error.h"

namespace mcl {

namespace {

thread_local InitCancel* tlsCancel = nullptr;

}  // namespace

void InitCancel::cancel() {
  std::lock_guard<std::mutex> lock(mutex_);
  cancelled_ = true;
  for (int fd : fds_) shutdown(fd, SHUT_RDWR);
}

bool InitCancel::cancelled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cancelled_;
}

void InitCancel::throwIfCancelled(const char* during) const {
  if (cancelled())
    throw error(mclInvalidUsage,
                "the communicator was aborted or destroyed during %s, before "
                "its initialisation ended",
                during);
}

void InitCancel::watch(int fd) {
  std::lock_guard<std::mutex> lock(mutex_);
  fds_.insert(fd);
  if (cancelled_) shutdown(fd, SHUT_RDWR);
}

void InitCancel::unwatch(int fd) {
  std::lock_guard<std::mutex> lock(mutex_);
  fds_.erase(fd);
}

InitCancel* currentInitCancel() { return tlsCancel; }

ScopedInitCancel::ScopedInitCancel(InitCancel& cancel) : previous_(tlsCancel) {
  tlsCancel = &cancel;
}

ScopedInitCancel::~ScopedInitCancel() { tlsCancel = previous_; }

void checkInitCancelled(const char* during) {
  if (tlsCancel != nullptr) tlsCancel->throwIfCancelled(during);
}

}  // namespace mcl
