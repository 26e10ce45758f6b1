// A stream: a background thread that runs the operations queued on it in
// order, so the caller can overlap communication with its own work. Errors
// are kept for mclStreamSynchronize / mclStreamQuery and also mark the
// communicator (mclCommGetAsyncError).
#pragma once

#include <mcl/mcl.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/run/execute.h"

struct mclStream {
  mclStream();
  ~mclStream();  // drains, then stops the thread

  // Queues a batch (one operation or a group). Counts it on each comm so
  // the comm outlives it.
  void enqueue(mcl::Batch batch);
  // Waits until idle; returns the first error since the last synchronize
  // (and clears it), with its message in *message.
  mclResult_t synchronize(std::string* message);
  // mclSuccess idle, mclInProgress busy, or the pending error.
  mclResult_t query(std::string* message);

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<mcl::Batch> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  mclResult_t error_ = mclSuccess;
  std::string errorMessage_;
  std::thread worker_;
};
