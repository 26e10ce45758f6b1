// The backend's operations and their work handles. Operations run one at
// a time in issue order (mcl's calls on one communicator must): on a
// thread of the backend's own, except that a caller waiting for an
// operation runs it (and any issued before it) on its own thread when no
// other thread has started them. A blocking call (issued, then waited on
// at once) thus costs no hand-over between threads, while async_op=True
// and DDP's calls run in the background.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "completions.h"

namespace mcl::torch_backend {

class OperationQueue;

class OrderedWork : public c10d::Work {
 public:
  // Runs the operation; returns its outputs (the future's value).
  using Body = std::function<std::vector<at::Tensor>()>;

  OrderedWork(int rank, c10d::OpType type, Body body,
              std::shared_ptr<OperationQueue> queue);

  bool wait(std::chrono::milliseconds timeout) override;
  std::vector<at::Tensor> result() override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  // The queue's, in this order: execute() runs the body once and marks
  // the work done; complete() then fulfils the future, whose callbacks
  // (DDP's, a comm hook's) run there, after the queue has moved on, so
  // that they may issue and wait for more operations.
  void execute();
  void complete();

 private:
  Body body_;
  std::vector<at::Tensor> outputs_;
  std::exception_ptr failure_;
  // Complete (its value ready) when the result is in the caller's tensors:
  // the copy back of a staged tensor is made and waited for before, so the
  // future needs no device streams (a CPU future, on any device).
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::shared_ptr<OperationQueue> queue_;
};

class OperationQueue {
 public:
  // waitLimit bounds how long a caller waits for an operation another
  // thread runs (each mcl call is bounded by the group's timeout already;
  // this catches what is not).
  explicit OperationQueue(std::chrono::milliseconds waitLimit);
  ~OperationQueue();  // stop()

  // Queues `work`. callerWaits: the caller waits at once (it says so), so
  // it runs the work here, after the ones before it.
  void submit(const c10::intrusive_ptr<OrderedWork>& work, bool callerWaits);

  // Returns once `work` is done, running queued operations up to it
  // itself when nobody else is. Throws the backend error after the limit.
  void runUntilDone(OrderedWork& work);

  // Lets queued operations finish, then ends the threads (from any thread,
  // the queue's own included). Idempotent.
  void stop();

 private:
  void serve();
  // Runs the operation at the head; the lock is let go meanwhile. On the
  // queue's thread, its future is completed by a completing thread: a
  // callback there may wait for a later operation, which this thread must
  // stay free to run. A caller that runs it completes it itself.
  void runHead(std::unique_lock<std::mutex>& lock, bool onQueueThread);
  static void join(std::thread& thread);

  std::chrono::milliseconds waitLimit_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<c10::intrusive_ptr<OrderedWork>> queued_;
  bool running_ = false;
  bool stopping_ = false;
  std::thread thread_;
  Completions completions_;
};

}  // namespace mcl::torch_backend
