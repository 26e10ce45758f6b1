#include "completions.h"

#include <utility>

namespace mcl::torch_backend {

Completions::~Completions() { stop(); }

void Completions::post(std::function<void()> complete) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.push_back(std::move(complete));
  if (idle_ == 0 && threads_.size() < kMostThreads)
    threads_.emplace_back([this] { serve(); });
  else
    posted_.notify_one();
}

void Completions::serve() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    ++idle_;
    posted_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
    --idle_;
    if (pending_.empty()) return;  // stopping, and nothing left
    std::function<void()> complete = std::move(pending_.front());
    pending_.pop_front();
    lock.unlock();
    complete();
    lock.lock();
  }
}

void Completions::stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    threads.swap(threads_);
  }
  posted_.notify_all();
  for (std::thread& thread : threads) {
    // The last reference may go on one of these threads (a callback that
    // dropped the group): it cannot wait for itself.
    if (thread.get_id() == std::this_thread::get_id())
      thread.detach();
    else
      thread.join();
  }
}

}  // namespace mcl::torch_backend
