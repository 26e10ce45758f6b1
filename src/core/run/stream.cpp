#include "core/run/stream.h"

#include <exception>
#include <mutex>
#include <string>
#include <utility>

#include "base/error.h"

mclStream::mclStream() : worker_([this] { run(); }) {}

mclStream::~mclStream() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

void mclStream::enqueue(mcl::Batch batch) {
  for (auto& op : batch.ops) op.comm->queuedOps.fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(batch));
  }
  wake_.notify_one();
}

void mclStream::run() {
  while (true) {
    mcl::Batch batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      batch = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    mclResult_t code = mclSuccess;
    std::string message;
    try {
      mcl::execute(batch);
    } catch (...) {
      mcl::Error e = mcl::asError(std::current_exception());
      code = e.code();
      message = e.what();
    }
    for (auto& op : batch.ops) op.comm->queuedOps.fetch_sub(1);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (code != mclSuccess && error_ == mclSuccess) {
        error_ = code;
        errorMessage_ = message;
      }
      busy_ = false;
    }
    idle_.notify_all();
  }
}

mclResult_t mclStream::synchronize(std::string* message) {
  std::unique_lock<std::mutex> lock(mutex_);
  // Each queued operation is bounded by its communicator's timeout, so this
  // wait is bounded too.
  idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
  mclResult_t code = error_;
  *message = errorMessage_;
  error_ = mclSuccess;
  errorMessage_.clear();
  return code;
}

mclResult_t mclStream::query(std::string* message) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_ != mclSuccess) {
    *message = errorMessage_;
    return error_;
  }
  return queue_.empty() && !busy_ ? mclSuccess : mclInProgress;
}
