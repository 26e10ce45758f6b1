// Stopping an init that runs on a thread of its own (a non-blocking config,
// or an init deferred to mclGroupEnd) when its communicator is aborted or
// destroyed first. The rendezvous, where an init waits for ranks that have
// not come yet, ends at once: its socket is shut down under it and its
// reconnect loop stops. Init also stops between its phases. Waits after
// the rendezvous (every rank has come: they end quickly) stay bounded by
// the communicator's timeout.
#pragma once

#include <mutex>
#include <set>

namespace mcl {

class InitCancel {
 public:
  // From any thread: shuts down every socket watched, now and later.
  void cancel();
  bool cancelled() const;
  // Throws mclInvalidUsage ("... was aborted during <during>") once
  // cancelled.
  void throwIfCancelled(const char* during) const;
  // fd is shut down at cancel (at once when cancelled already) until
  // unwatched; unwatch before closing it.
  void watch(int fd);
  void unwatch(int fd);

 private:
  mutable std::mutex mutex_;
  bool cancelled_ = false;
  std::set<int> fds_;
};

// The cancel of the init running on this thread, or null.
InitCancel* currentInitCancel();

// Makes `cancel` this thread's for the life of the object.
class ScopedInitCancel {
 public:
  explicit ScopedInitCancel(InitCancel& cancel);
  ~ScopedInitCancel();
  ScopedInitCancel(const ScopedInitCancel&) = delete;
  ScopedInitCancel& operator=(const ScopedInitCancel&) = delete;

 private:
  InitCancel* previous_;
};

// Between phases of an init: throws when this thread's init was cancelled.
void checkInitCancelled(const char* during);

}  // namespace mcl
