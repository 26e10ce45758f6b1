// One mcl communicator as Python sees it: its handle, the background queue
// of async work, and the rules that keep calls in issue order. Blocking
// calls let go of the GIL; Ctrl-C aborts the communicator.
#pragma once

#include <mcl/mcl.h>
#include <pybind11/pybind11.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "buffer_view.h"
#include "op_queue.h"

namespace mcl::python {

// mclConfig_t's fields, as keyword arguments.
struct ConfigArgs {
  std::optional<int> timeout;
  std::optional<std::string> transport;
  std::optional<std::string> name;
  std::optional<std::string> algorithms;
};

class Communicator : public std::enable_shared_from_this<Communicator> {
 public:
  using Call = std::function<mclResult_t(mclComm_t)>;

  static std::shared_ptr<Communicator> initRank(int size,
                                                const std::string& uniqueId,
                                                int rank,
                                                const ConfigArgs& config);
  static std::shared_ptr<Communicator> initFromEnv(const ConfigArgs& config);
  explicit Communicator(mclComm_t handle);
  ~Communicator();  // closes, if the program did not

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool closed() const;

  // Runs `call` now (blocking), or queues it after earlier async work;
  // async returns a Work holding `buffers` until the call is done, else
  // None. `name` is the operation's, for Work's repr.
  pybind11::object run(const char* name, std::vector<BufferView> buffers,
                       Call call, bool async);

  // Collective: the new communicator, or None for MCL_SPLIT_NOCOLOR.
  std::shared_ptr<Communicator> split(int color, int key);
  void abort();
  void close();
  std::string topology();
  std::string algorithm(const std::string& collective, pybind11::handle count,
                        const std::string& dtype);
  pybind11::object asyncError();

  // Work calls these.
  void abortForInterrupt();
  // Buffers of async work whose Work object went away first: kept until
  // the operation is done (dropped under the GIL, on a later call).
  void adoptOrphans(std::shared_ptr<Completion> completion,
                    std::vector<BufferView> buffers);

 private:
  mclComm_t handleOrThrow() const;
  // Runs one mcl call on the handle as it is now, one call at a time.
  OpQueue::Outcome callNow(const Call& call);
  // Blocks (interruptibly) until queued async work is done.
  void drainQueue();
  void releaseFinishedOrphans();
  // Marks the handle gone; returns the old one (null when already gone).
  mclComm_t takeHandle();

  mutable std::mutex handleMutex_;
  mclComm_t handle_ = nullptr;
  std::string closedReason_;
  int rank_ = 0;
  int size_ = 0;
  // One mcl call at a time on this communicator (inline or worker).
  std::mutex callMutex_;
  struct Orphan {
    std::shared_ptr<Completion> completion;
    std::vector<BufferView> buffers;
  };
  std::vector<Orphan> orphans_;  // touched with the GIL held
  // Last, so it is destroyed first: its thread may still use the members
  // above while it finishes.
  OpQueue queue_;
};

void registerCommunicator(pybind11::module_& m);

}  // namespace mcl::python
