#include "core/bootstrap/root_registry.h"

#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>

#include "core/bootstrap/bootstrap_root.h"
#include "platform/socket.h"

namespace mcl {

namespace rendezvous {

namespace {

// The registries below are never destroyed: root threads are detached and
// may still run while the process exits and runs static destructors.

// A process forked after mclGetUniqueId (the usual way to start local
// ranks) must not keep the root's port open: its copy of the listening
// socket would accept connections nobody serves. Children close them.
std::mutex& rootFdsMutex = *new std::mutex;
std::set<int>& rootFds = *new std::set<int>;

// Roots of this process by the comm they served, and whether they are done:
// a rank in the root's own process waits for its root before init returns,
// or a fast rank 0 could exit (taking the detached root thread with it)
// before the root has sent the last message to every other rank.
std::mutex& rootsMutex = *new std::mutex;
std::condition_variable& rootsChanged = *new std::condition_variable;
std::map<uint64_t, bool>& rootFinished =
    *new std::map<uint64_t, bool>;  // commId -> finished

}  // namespace

void registerRootFd(int fd) {
  static std::once_flag once;
  std::call_once(once, [] {
    pthread_atfork([] { rootFdsMutex.lock(); }, [] { rootFdsMutex.unlock(); },
                   [] {
                     for (int open : rootFds) close(open);
                     rootFds.clear();
                     rootFdsMutex.unlock();
                   });
  });
  std::lock_guard<std::mutex> lock(rootFdsMutex);
  rootFds.insert(fd);
}

void unregisterRootFd(int fd) {
  std::lock_guard<std::mutex> lock(rootFdsMutex);
  rootFds.erase(fd);
}

void setRootState(uint64_t commId, bool finished) {
  static std::once_flag once;
  std::call_once(once, [] {
    // A forked child has no root thread: it must not wait for one.
    pthread_atfork([] { rootsMutex.lock(); }, [] { rootsMutex.unlock(); },
                   [] {
                     rootFinished.clear();
                     rootsMutex.unlock();
                   });
  });
  {
    std::lock_guard<std::mutex> lock(rootsMutex);
    rootFinished[commId] = finished;
  }
  rootsChanged.notify_all();
}

}  // namespace rendezvous

void waitForRendezvousRoot(uint64_t commId, platform::Deadline deadline) {
  std::unique_lock<std::mutex> lock(rendezvous::rootsMutex);
  if (rendezvous::rootFinished.find(commId) == rendezvous::rootFinished.end())
    return;  // the root runs elsewhere
  // Several ranks of one process may wait; the first one out forgets the
  // entry, which the others must read as "finished".
  rendezvous::rootsChanged.wait_until(lock, deadline, [&] {
    auto it = rendezvous::rootFinished.find(commId);
    return it == rendezvous::rootFinished.end() || it->second;
  });
  rendezvous::rootFinished.erase(commId);
}

}  // namespace mcl
