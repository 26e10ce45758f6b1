#include "core/comm/comm.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "base/error.h"
#include "base/log.h"

const std::string& mclComm::label() const {
  // initComm fills it once the settings are known; a communicator built
  // another way (unit tests) gets it on first use, before any thread could
  // share it.
  if (label_.empty()) {
    label_ = "rank " + std::to_string(rank) + "/" + std::to_string(nranks);
    if (!settings.name.empty()) label_ = settings.name + " " + label_;
  }
  return label_;
}

bool mclComm::fail(mclResult_t code, const std::string& message) {
  if (code == mclSuccess || code == mclInvalidArgument) return false;
  std::lock_guard<std::mutex> lock(stickyMutex_);
  if (sticky_.load() != mclSuccess) return false;
  stickyMessage_ = message;
  sticky_.store(code, std::memory_order_release);
  MCL_LOG(Warn, mcl::kLogColl, "%s: communicator failed: %s", label().c_str(),
          message.c_str());
  return true;
}

void mclComm::tellPeers(const std::string& reason, bool finished) noexcept {
  useDevices(true);
  if (peerWatch) {
    if (finished)
      peerWatch->sayGoodbye(reason);
    else
      peerWatch->sayFarewell(reason);
  }
  // A normal close hands over what a peer may still miss first: a farewell
  // ends a peer's wait at once, even for a piece that was about to come.
  if (finished)
    for (auto* list : {&connections, &p2pConnections})
      for (auto& connection : *list) {
        if (connection == nullptr) continue;
        try {
          connection->finish();
        } catch (...) {
          // Best effort, as the farewell.
        }
      }
  for (auto* list : {&connections, &p2pConnections})
    for (auto& connection : *list) {
      if (connection == nullptr) continue;
      try {
        connection->sayFarewell(reason);
      } catch (...) {
        // Best effort: the peer then sees the connection close instead.
      }
    }
  useDevices(false);
}

void mclComm::failAndTellPeers(mclResult_t code, const std::string& message) {
  if (fail(code, message)) tellPeers(label() + " gave up: " + message);
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
  if (splitsUnderWay.load(std::memory_order_relaxed) > 0)
    throw mcl::error(mclInvalidUsage,
                     "%s: a non-blocking or grouped mclCommSplit of it is "
                     "under way; poll mclCommGetAsyncError on it until it "
                     "gives mclSuccess",
                     label().c_str());
  if (finalized.load(std::memory_order_relaxed))
    throw mcl::error(mclInvalidUsage,
                     "%s: the communicator was finalized; it takes no new "
                     "operations",
                     label().c_str());
}

uint64_t mclComm::takeTicket() {
  return nextTicket_.fetch_add(1, std::memory_order_acq_rel);
}

void mclComm::useDevices(bool begin) noexcept {
  for (auto& device : devices) {
    if (device == nullptr) continue;
    if (begin)
      device->beginCalls();
    else
      device->endCalls();
  }
}

void mclComm::waitTurn(uint64_t ticket) {
  if (serving_.load(std::memory_order_acquire) == ticket) {
    useDevices(true);
    return;
  }
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  std::unique_lock<std::mutex> lock(orderMutex_);
  // Earlier batches are each bounded by the timeout; the slices only make
  // an abort noticed (and bound a missed wake-up).
  while (serving_.load(std::memory_order_seq_cst) != ticket) {
    if (aborted.load(std::memory_order_relaxed)) {
      waiters_.fetch_sub(1, std::memory_order_seq_cst);
      throw mcl::error(mclRemoteError, "%s: aborted (mclCommAbort)",
                       label().c_str());
    }
    turnChanged_.wait_for(lock, std::chrono::milliseconds(20));
  }
  waiters_.fetch_sub(1, std::memory_order_seq_cst);
  useDevices(true);
}

void mclComm::drainSkippedLocked() {
  while (!skipped_.empty() &&
         *skipped_.begin() == serving_.load(std::memory_order_seq_cst)) {
    skipped_.erase(skipped_.begin());
    skippedCount_.fetch_sub(1, std::memory_order_seq_cst);
    serving_.fetch_add(1, std::memory_order_seq_cst);
  }
}

void mclComm::finishTurn() {
  useDevices(false);
  // Either a waiter (or a skip) counted itself before this increment and
  // is seen below, or it comes after and sees the new turn itself.
  serving_.fetch_add(1, std::memory_order_seq_cst);
  if (waiters_.load(std::memory_order_seq_cst) == 0 &&
      skippedCount_.load(std::memory_order_seq_cst) == 0)
    return;
  std::lock_guard<std::mutex> lock(orderMutex_);
  drainSkippedLocked();
  turnChanged_.notify_all();
}

void mclComm::skipTurn(uint64_t ticket) {
  std::lock_guard<std::mutex> lock(orderMutex_);
  // Nobody else passes this ticket: only its holder skips or finishes it.
  if (ticket < serving_.load(std::memory_order_seq_cst)) return;
  skipped_.insert(ticket);
  skippedCount_.fetch_add(1, std::memory_order_seq_cst);
  drainSkippedLocked();
  turnChanged_.notify_all();
}
