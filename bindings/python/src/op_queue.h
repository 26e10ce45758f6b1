// Background work of one communicator: operations started with
// async_op=True run on one thread, in the order they were issued. Nothing
// here touches Python objects (the worker never holds the GIL): buffers
// stay alive through the Python side's PendingOp.
#pragma once

#include <mcl/mcl.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace mcl::python {

// The outcome of one operation, shared by the worker and its waiters.
class Completion {
 public:
  void finish(mclResult_t code, std::string message);
  bool done() const;
  // Waits up to `limit`; true once finished.
  bool waitFor(std::chrono::milliseconds limit) const;
  mclResult_t code() const;
  std::string message() const;

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable finished_;
  bool done_ = false;
  mclResult_t code_ = mclSuccess;
  std::string message_;
};

class OpQueue {
 public:
  // What a call returned: its code, and the message (mclGetLastError is
  // per thread, so the call itself reads it).
  struct Outcome {
    mclResult_t code = mclSuccess;
    std::string message;
  };
  using Call = std::function<Outcome()>;

  OpQueue() = default;
  OpQueue(const OpQueue&) = delete;
  OpQueue& operator=(const OpQueue&) = delete;
  ~OpQueue();  // lets queued work finish, then joins

  std::shared_ptr<Completion> push(Call call);
  // Operations queued or running.
  bool busy() const;
  // Fails every operation not yet started with (code, message): after an
  // abort they would only meet a dead communicator.
  void dropQueued(mclResult_t code, const std::string& message);

 private:
  struct Item {
    Call call;
    std::shared_ptr<Completion> completion;
  };
  void run();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Item> items_;
  bool running_ = false;  // an item is out of the queue, being run
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace mcl::python
