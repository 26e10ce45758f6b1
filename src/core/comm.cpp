#include "core/comm.h"

#include "base/error.h"
#include "base/log.h"

std::string mclComm::label() const {
  std::string text =
      "rank " + std::to_string(rank) + "/" + std::to_string(nranks);
  if (!settings.name.empty()) text = settings.name + " " + text;
  return text;
}

void mclComm::fail(mclResult_t code, const std::string& message) {
  if (code == mclSuccess || code == mclInvalidArgument) return;
  std::lock_guard<std::mutex> lock(stickyMutex_);
  if (sticky_.load() != mclSuccess) return;
  stickyMessage_ = message;
  sticky_.store(code, std::memory_order_release);
  MCL_LOG(Warn, mcl::kLogColl, "%s: communicator failed: %s", label().c_str(),
          message.c_str());
}

std::string mclComm::stickyMessage() const {
  std::lock_guard<std::mutex> lock(stickyMutex_);
  return stickyMessage_;
}

void mclComm::checkRunnable() const {
  mclResult_t code = stickyError();
  if (code != mclSuccess)
    throw mcl::Error(code,
                     "communicator failed earlier (destroy or abort it): " +
                         stickyMessage());
  if (aborted.load(std::memory_order_relaxed))
    throw mcl::error(mclInvalidUsage, "%s: the communicator was aborted",
                     label().c_str());
}

void mclComm::checkUsable() const {
  checkRunnable();
  if (finalized.load(std::memory_order_relaxed))
    throw mcl::error(mclInvalidUsage,
                     "%s: the communicator was finalized; it takes no new "
                     "operations",
                     label().c_str());
}

uint64_t mclComm::takeTicket() {
  std::lock_guard<std::mutex> lock(orderMutex_);
  return nextTicket_++;
}

void mclComm::waitTurn(uint64_t ticket) {
  std::unique_lock<std::mutex> lock(orderMutex_);
  // Earlier batches are each bounded by the timeout; the slices only make
  // an abort noticed.
  while (serving_ != ticket) {
    if (aborted.load(std::memory_order_relaxed))
      throw mcl::error(mclRemoteError, "%s: aborted (mclCommAbort)",
                       label().c_str());
    turnChanged_.wait_for(lock, std::chrono::milliseconds(20));
  }
}

void mclComm::advanceLocked() {
  ++serving_;
  while (!skipped_.empty() && *skipped_.begin() == serving_) {
    skipped_.erase(skipped_.begin());
    ++serving_;
  }
  turnChanged_.notify_all();
}

void mclComm::finishTurn() {
  std::lock_guard<std::mutex> lock(orderMutex_);
  advanceLocked();
}

void mclComm::skipTurn(uint64_t ticket) {
  std::lock_guard<std::mutex> lock(orderMutex_);
  if (ticket == serving_) {
    advanceLocked();
  } else if (ticket > serving_) {
    skipped_.insert(ticket);
  }
}
