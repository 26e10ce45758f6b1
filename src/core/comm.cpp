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
