// A communicator whose init runs on a thread of its own: started at once
// for a non-blocking config (mclConfig_t.blocking = 0), or by mclGroupEnd
// for one made inside a group (several ranks may then be initialised from
// one thread). Its handle exists from the call (handle_registry.h); the
// communicator behind it once the init ends. Every wait here is bounded by
// the init's own timeout.
#pragma once

#include <mcl/mcl.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "core/bootstrap/init_cancel.h"
#include "core/comm/comm.h"

namespace mcl {

class PendingInit : public std::enable_shared_from_this<PendingInit> {
 public:
  using Build = std::function<std::unique_ptr<mclComm>()>;
  enum class State { Waiting, Running, Failed, Built };

  // what: the call, for messages ("mclCommInitRank, rank 1 of 4");
  // blocking: whether mclGroupEnd waits for it; mayBuildNothing: a split's
  // rank of no color, whose build returns null.
  PendingInit(std::string what, bool blocking, Build build,
              bool mayBuildNothing = false);
  // Cancels a running init and waits for its thread; a communicator it
  // built and nobody took is destroyed (its peers are told).
  ~PendingInit();
  PendingInit(const PendingInit&) = delete;
  PendingInit& operator=(const PendingInit&) = delete;

  // Runs on the init's thread as it ends (built or failed), in the same
  // step that makes the outcome visible: a split's parent leaves its
  // 'split under way' state exactly when the new communicator is there.
  // Must not take the handle registry's lock. Before start().
  void atEnd(std::function<void()> fn) { atEnd_ = std::move(fn); }
  // Nobody takes its result (a split's rank of no color): its thread
  // keeps it alive and is not joined. Before start().
  void runDetached() { detached_ = true; }
  // The thread starts building (once). Made with std::make_shared.
  void start();
  // It never runs: the group it was in failed.
  void failUnstarted(mclResult_t code, const std::string& message);
  // Stops a running init (init_cancel.h): it ends soon, failed.
  void cancel();
  // Until the init ends.
  void waitEnded();

  State state() const;
  bool blocking() const { return blocking_; }
  const std::string& what() const { return what_; }
  // The failure, when Failed.
  mclResult_t code() const;
  std::string message() const;
  // The communicator, when Built (once): the thread has ended.
  std::unique_ptr<mclComm> take();

 private:
  void run();

  const std::string what_;
  const bool blocking_;
  const bool mayBuildNothing_;
  bool detached_ = false;
  Build build_;
  std::function<void()> atEnd_;
  InitCancel cancel_;
  mutable std::mutex mutex_;
  std::condition_variable ended_;
  State state_ = State::Waiting;
  mclResult_t code_ = mclSuccess;
  std::string message_;
  std::unique_ptr<mclComm> built_;
  std::thread thread_;
};

}  // namespace mcl
