#include "core/comm/pending_init.h"

#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "base/error.h"
#include "base/log.h"

namespace mcl {

PendingInit::PendingInit(std::string what, bool blocking, Build build,
                         bool mayBuildNothing)
    : what_(std::move(what)),
      blocking_(blocking),
      mayBuildNothing_(mayBuildNothing),
      build_(std::move(build)) {}

PendingInit::~PendingInit() {
  cancel();
  if (thread_.joinable()) thread_.join();
  if (built_) {
    built_->tellPeers(built_->label() +
                      " destroyed the communicator before using it");
    built_.reset();
  }
}

void PendingInit::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (state_ != State::Waiting) return;
  state_ = State::Running;
  if (detached_) {
    std::thread([self = shared_from_this()] { self->run(); }).detach();
  } else {
    thread_ = std::thread([this] { run(); });
  }
}

void PendingInit::run() {
  std::unique_ptr<mclComm> comm;
  mclResult_t code = mclSuccess;
  std::string message;
  {
    ScopedInitCancel scope(cancel_);
    try {
      comm = build_();
    } catch (...) {
      Error e = asError(std::current_exception());
      code = e.code();
      message = e.what();
    }
  }
  if (code != mclSuccess && cancel_.cancelled()) {
    // Its own abort or destroy ended it: say that, not what broke.
    message =
        "stopped: the communicator was aborted or destroyed before "
        "its initialisation ended (" +
        message + ")";
    MCL_LOG(Info, kLogInit, "%s: %s", what_.c_str(), message.c_str());
  } else if (code != mclSuccess) {
    MCL_LOG(Warn, kLogInit, "%s: %s", what_.c_str(), message.c_str());
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (code == mclSuccess && comm == nullptr && !mayBuildNothing_) {
    code = mclInternalError;
    message = "the init built no communicator";
  }
  state_ = code == mclSuccess ? State::Built : State::Failed;
  code_ = code;
  message_ = std::move(message);
  built_ = std::move(comm);
  if (atEnd_) atEnd_();
  ended_.notify_all();
}

void PendingInit::failUnstarted(mclResult_t code, const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (state_ != State::Waiting) return;
  state_ = State::Failed;
  code_ = code;
  message_ = message;
  ended_.notify_all();
}

void PendingInit::cancel() {
  cancel_.cancel();
  failUnstarted(mclInvalidUsage,
                "the communicator was aborted or destroyed before its "
                "initialisation started");
}

void PendingInit::waitEnded() {
  std::unique_lock<std::mutex> lock(mutex_);
  ended_.wait(lock, [this] {
    return state_ == State::Failed || state_ == State::Built;
  });
}

PendingInit::State PendingInit::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_;
}

mclResult_t PendingInit::code() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return code_;
}

std::string PendingInit::message() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return message_;
}

std::unique_ptr<mclComm> PendingInit::take() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (state_ != State::Built) return nullptr;
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  return std::move(built_);
}

}  // namespace mcl
