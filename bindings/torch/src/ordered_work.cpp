#include "ordered_work.h"

#include <ATen/core/jit_type.h>

#include <exception>
#include <string>
#include <utility>

#include "torch_version.h"

namespace mcl::torch_backend {

OrderedWork::OrderedWork(int rank, c10d::OpType type, Body body,
                         std::vector<c10::Device> devices,
                         OperationQueue* queue)
    : c10d::Work(rank, type),
      body_(std::move(body)),
      future_(c10::make_intrusive<c10::ivalue::Future>(
          c10::ListType::create(c10::TensorType::get()), std::move(devices))),
      queue_(queue) {}

void OrderedWork::run() {
  std::exception_ptr failure;
  try {
    outputs_ = body_();
  } catch (...) {
    failure = std::current_exception();
  }
  body_ = nullptr;  // lets go of the staging buffers at once
  finish(failure);
  // DDP's callbacks run here, after the work reads as done.
  if (failure)
    future_->setError(failure);
  else
    future_->markCompleted(c10::IValue(outputs_));
}

bool OrderedWork::wait(std::chrono::milliseconds timeout) {
  (void)timeout;  // every mcl call is bounded by the group's timeout
  queue_->runUntilDone(*this);
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

OperationQueue::~OperationQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void OperationQueue::submit(const c10::intrusive_ptr<OrderedWork>& work,
                            bool callerWaits) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queued_.push_back(work);
  }
  if (callerWaits) {
    runUntilDone(*work);
    return;
  }
  changed_.notify_all();
}

void OperationQueue::runHead(std::unique_lock<std::mutex>& lock) {
  c10::intrusive_ptr<OrderedWork> work = std::move(queued_.front());
  queued_.pop_front();
  running_ = true;
  lock.unlock();
  work->run();
  lock.lock();
  running_ = false;
  changed_.notify_all();
}

void OperationQueue::runUntilDone(OrderedWork& work) {
  const auto deadline = std::chrono::steady_clock::now() + waitLimit_;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!work.isCompleted()) {
    if (!running_ && !queued_.empty()) {
      runHead(lock);
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
    runHead(lock);
  }
}

}  // namespace mcl::torch_backend
