#include "ordered_work.h"

#include <ATen/core/jit_type.h>
#include <pybind11/pybind11.h>

#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "torch_version.h"

namespace mcl::torch_backend {

OrderedWork::OrderedWork(int rank, c10d::OpType type, Body body,
                         std::shared_ptr<OperationQueue> queue)
    : c10d::Work(rank, type),
      body_(std::move(body)),
      future_(c10::make_intrusive<c10::ivalue::Future>(
          c10::ListType::create(c10::TensorType::get()))),
      queue_(std::move(queue)) {}

void OrderedWork::execute() {
  try {
    outputs_ = body_();
  } catch (...) {
    failure_ = std::current_exception();
  }
  body_ = nullptr;  // lets go of the staging buffers at once
  finish(failure_);
}

void OrderedWork::complete() {
  try {
    if (failure_) {
      future_->setError(failure_);
    } else {
      // A CPU future records no device events: the values are in place.
      future_->markCompleted(c10::IValue(outputs_));
    }
  } catch (const std::exception& e) {
    // A callback of the future failed; the work itself did not. It goes
    // to the log, as c10d's own backends do, and the queue goes on.
    TORCH_WARN("mcl backend: a callback of an operation's future failed: ",
               e.what());
  }
}

bool OrderedWork::wait(std::chrono::milliseconds timeout) {
  (void)timeout;  // every mcl call is bounded by the group's timeout
  {
    // Other threads may need the GIL to finish what runs before (a
    // callback of an earlier future): it is not held while waiting.
    std::optional<pybind11::gil_scoped_release> released;
    if (Py_IsInitialized() && PyGILState_Check()) released.emplace();
    if (!isCompleted()) queue_->runUntilDone(*this);
    // The work reads as done a moment before its future completes.
    future_->wait();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (exception_) std::rethrow_exception(exception_);
  return true;
}

std::vector<at::Tensor> OrderedWork::result() {
  wait(std::chrono::milliseconds(0));
  return outputs_;
}

c10::intrusive_ptr<c10::ivalue::Future> OrderedWork::getFuture() {
  return future_;
}

OperationQueue::OperationQueue(std::chrono::milliseconds waitLimit)
    : waitLimit_(waitLimit), thread_([this] { serve(); }) {}

OperationQueue::~OperationQueue() { stop(); }

void OperationQueue::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  join(thread_);
  completions_.stop();
}

void OperationQueue::join(std::thread& thread) {
  if (!thread.joinable()) return;
  // The last reference may go on one of the queue's own threads (a
  // callback that dropped the group): it cannot wait for itself.
  if (thread.get_id() == std::this_thread::get_id())
    thread.detach();
  else
    thread.join();
}

void OperationQueue::submit(const c10::intrusive_ptr<OrderedWork>& work,
                            bool callerWaits) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) throwValueError("mcl backend: the process group is closed");
    queued_.push_back(work);
  }
  if (callerWaits) {
    runUntilDone(*work);
    return;
  }
  changed_.notify_all();
}

void OperationQueue::runHead(std::unique_lock<std::mutex>& lock,
                             bool onQueueThread) {
  c10::intrusive_ptr<OrderedWork> work = std::move(queued_.front());
  queued_.pop_front();
  running_ = true;
  lock.unlock();
  work->execute();
  lock.lock();
  running_ = false;
  changed_.notify_all();
  if (onQueueThread) {
    completions_.post([work = std::move(work)] { work->complete(); });
    return;
  }
  lock.unlock();
  work->complete();
  work.reset();
  lock.lock();
}

void OperationQueue::runUntilDone(OrderedWork& work) {
  const auto deadline = std::chrono::steady_clock::now() + waitLimit_;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!work.isCompleted()) {
    if (!running_ && !queued_.empty()) {
      runHead(lock, false);
      continue;
    }
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout &&
        !work.isCompleted())
      throwBackendError(
          "mcl backend: an operation did not finish within " +
          std::to_string(waitLimit_.count() / 1000) +
          " s, though each of mcl's calls is bounded by the group's "
          "timeout: the process group's thread is stuck");
  }
}

void OperationQueue::serve() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(
        lock, [this] { return !running_ && (stopping_ || !queued_.empty()); });
    if (queued_.empty()) return;  // stopping, and nothing left
    runHead(lock, true);
  }
}

}  // namespace mcl::torch_backend
