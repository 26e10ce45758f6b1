// Completes the futures of the operations the queue's thread ran: their
// callbacks (DDP's, a comm hook's) run here, never on the thread that runs
// operations. A callback may issue another operation and wait for its
// future (DDP's PowerSGD hook does), whose completion must not wait for
// that callback: when every completing thread is busy, another starts (up
// to a bound; beyond it, completions wait their turn).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mcl::torch_backend {

class Completions {
 public:
  Completions() = default;
  ~Completions();  // stop()

  // Runs `complete` on a completing thread.
  void post(std::function<void()> complete);
  // Lets posted completions run, then ends the threads (from any thread,
  // one of them included). Idempotent.
  void stop();

 private:
  void serve();

  static constexpr size_t kMostThreads = 8;
  std::mutex mutex_;
  std::condition_variable posted_;
  std::deque<std::function<void()>> pending_;
  size_t idle_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace mcl::torch_backend
