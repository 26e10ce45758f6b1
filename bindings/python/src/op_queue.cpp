#include "op_queue.h"

#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace mcl::python {

void Completion::finish(mclResult_t code, std::string message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    code_ = code;
    message_ = std::move(message);
    done_ = true;
  }
  finished_.notify_all();
}

bool Completion::done() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

bool Completion::waitFor(std::chrono::milliseconds limit) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return finished_.wait_for(lock, limit, [this] { return done_; });
}

mclResult_t Completion::code() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return code_;
}

std::string Completion::message() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return message_;
}

OpQueue::~OpQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::shared_ptr<Completion> OpQueue::push(Call call) {
  auto completion = std::make_shared<Completion>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    items_.push_back(Item{std::move(call), completion});
    // Started on first use: most communicators never run async work.
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  }
  wake_.notify_one();
  return completion;
}

bool OpQueue::busy() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return running_ || !items_.empty();
}

void OpQueue::dropQueued(mclResult_t code, const std::string& message) {
  std::deque<Item> dropped;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    dropped.swap(items_);
  }
  for (Item& item : dropped) item.completion->finish(code, message);
}

void OpQueue::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !items_.empty(); });
    if (items_.empty()) return;  // stopping, and nothing left
    Item item = std::move(items_.front());
    items_.pop_front();
    running_ = true;
    lock.unlock();
    Outcome outcome = item.call();
    lock.lock();
    running_ = false;
    lock.unlock();
    // After running_ drops, so a waiter that sees the completion done
    // also sees the queue idle.
    item.completion->finish(outcome.code, std::move(outcome.message));
    lock.lock();
  }
}

}  // namespace mcl::python
