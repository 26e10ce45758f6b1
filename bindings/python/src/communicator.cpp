#include "communicator.h"

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "blocking_wait.h"
#include "errors.h"
#include "interrupt.h"
#include "work.h"

namespace py = pybind11;

namespace mcl::python {
namespace {

// The message of this thread's last failed call, never empty.
std::string lastErrorText(mclResult_t rc) {
  std::string text = mclGetLastError(nullptr);
  return text.empty() ? mclGetErrorString(rc) : text;
}

// A config whose strings live as long as the struct.
struct OwnedConfig {
  explicit OwnedConfig(const ConfigArgs& given) : args(given) {
    if (args.timeout) config.timeoutSeconds = *args.timeout;
    if (args.transport) config.transport = args.transport->c_str();
    if (args.name) config.commName = args.name->c_str();
    if (args.algorithms) config.algorithms = args.algorithms->c_str();
    config.blocking = 1;  // init waits here (MCL_COMM_BLOCKING=0 or not)
  }
  OwnedConfig(const OwnedConfig&) = delete;
  ConfigArgs args;
  mclConfig_t config = MCL_CONFIG_INITIALIZER;
};

// Init waits for every rank, which may take the whole timeout. It runs on
// a thread of its own so that Ctrl-C can leave it: the communicator it
// builds after that is aborted at once.
mclComm_t initInterruptibly(std::function<mclResult_t(mclComm_t*)> init) {
  struct State {
    Completion completion;
    std::mutex mutex;
    bool abandoned = false;
    mclComm_t comm = nullptr;
  };
  auto state = std::make_shared<State>();
  std::thread([state, init = std::move(init)] {
    mclComm_t comm = nullptr;
    const mclResult_t rc = init(&comm);
    std::string message = rc == mclSuccess ? "" : lastErrorText(rc);
    {
      std::lock_guard<std::mutex> lock(state->mutex);
      if (state->abandoned && rc == mclSuccess) {
        mclCommAbort(comm);
      } else {
        state->comm = comm;
      }
    }
    state->completion.finish(rc, message);
  }).detach();
  auto abandon = [state] {
    std::lock_guard<std::mutex> lock(state->mutex);
    state->abandoned = true;
    if (state->comm != nullptr) mclCommAbort(state->comm);
    state->comm = nullptr;
  };
  try {
    waitInterruptibly(state->completion, std::nullopt, abandon);
  } catch (...) {
    // Any exception a signal handler raised (SystemExit from SIGTERM, a
    // SIGALRM timeout) leaves the init behind: nobody would free it.
    abandon();
    throw;
  }
  if (state->completion.code() != mclSuccess)
    fail(state->completion.code(), state->completion.message());
  return state->comm;
}

}  // namespace

std::shared_ptr<Communicator> Communicator::initRank(
    int size, const std::string& uniqueId, int rank, const ConfigArgs& args) {
  mclUniqueId id;
  check(mclUniqueIdFromString(uniqueId.c_str(), &id));
  auto config = std::make_shared<OwnedConfig>(args);
  return std::make_shared<Communicator>(initInterruptibly([=](mclComm_t* comm) {
    return mclCommInitRankConfig(comm, size, id, rank, &config->config);
  }));
}

std::shared_ptr<Communicator> Communicator::initFromEnv(
    const ConfigArgs& args) {
  auto config = std::make_shared<OwnedConfig>(args);
  return std::make_shared<Communicator>(initInterruptibly([=](mclComm_t* comm) {
    return mclCommInitFromEnv(comm, &config->config);
  }));
}

Communicator::Communicator(mclComm_t handle) : handle_(handle) {
  check(mclCommUserRank(handle, &rank_));
  check(mclCommCount(handle, &size_));
}

Communicator::~Communicator() {
  // The GIL is held: pybind11 drops the last reference with it.
  try {
    close();
  } catch (py::error_already_set& e) {
    // Ctrl-C while it waited for dropped async work: abort, and keep the
    // interrupt for Python (a destructor cannot raise it).
    const bool interrupted = e.matches(PyExc_KeyboardInterrupt);
    if (mclComm_t handle = takeHandle()) mclCommAbort(handle);
    if (interrupted) PyErr_SetInterrupt();
  } catch (...) {
    if (mclComm_t handle = takeHandle()) mclCommAbort(handle);
  }
}

bool Communicator::closed() const {
  std::lock_guard<std::mutex> lock(handleMutex_);
  return handle_ == nullptr;
}

mclComm_t Communicator::handleOrThrow() const {
  std::lock_guard<std::mutex> lock(handleMutex_);
  if (handle_ == nullptr)
    fail(mclInvalidUsage, "the communicator is " + closedReason_ +
                              ": make a new one with mcl.init");
  return handle_;
}

mclComm_t Communicator::takeHandle() {
  std::lock_guard<std::mutex> lock(handleMutex_);
  return std::exchange(handle_, nullptr);
}

OpQueue::Outcome Communicator::callNow(const Call& call) {
  std::lock_guard<std::mutex> lock(callMutex_);
  mclComm_t handle;
  {
    // Read when the call runs: work queued before an abort finds it gone.
    std::lock_guard<std::mutex> handleLock(handleMutex_);
    handle = handle_;
    if (handle == nullptr)
      return {mclRemoteError, "the communicator was " + closedReason_ +
                                  " before this operation started"};
  }
  const mclResult_t rc = call(handle);
  if (rc == mclSuccess) return {};
  return {rc, lastErrorText(rc)};
}

py::object Communicator::run(const char* name, std::vector<BufferView> buffers,
                             Call call, bool async) {
  releaseFinishedOrphans();
  handleOrThrow();  // a closed communicator refuses at once
  if (async || queue_.busy()) {
    // Behind earlier async work, so every rank issues in the same order.
    Work work(shared_from_this(), queue_.push([this, call = std::move(call)] {
      return callNow(call);
    }),
              std::move(buffers), name);
    if (async) return py::cast(std::move(work));
    work.wait(std::nullopt);
    return py::none();
  }
  OpQueue::Outcome outcome;
  {
    InterruptGuard guard([this] { abortForInterrupt(); });
    py::gil_scoped_release release;
    outcome = callNow(call);
  }
  if (outcome.code != mclSuccess) {
    // Ctrl-C aborted the call: Python raises KeyboardInterrupt.
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    fail(outcome.code, outcome.message);
  }
  return py::none();
}

void Communicator::drainQueue() {
  while (queue_.busy()) {
    // A no-op queued last finishes after everything before it.
    auto marker = queue_.push([] { return OpQueue::Outcome{}; });
    waitInterruptibly(*marker, std::nullopt, [this] { abortForInterrupt(); });
  }
}

std::shared_ptr<Communicator> Communicator::split(int color, int key) {
  drainQueue();
  mclComm_t handle = handleOrThrow();
  mclComm_t child = nullptr;
  mclResult_t rc;
  std::string message;
  {
    InterruptGuard guard([this] { abortForInterrupt(); });
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(callMutex_);
    rc = mclCommSplit(handle, color, key, &child, nullptr);
    if (rc != mclSuccess) message = lastErrorText(rc);
  }
  if (rc != mclSuccess) {
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    fail(rc, message);
  }
  if (child == nullptr) return nullptr;
  return std::make_shared<Communicator>(child);
}

void Communicator::abort() {
  mclComm_t handle = takeHandle();
  if (handle == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(handleMutex_);
    closedReason_ = "aborted";
  }
  queue_.dropQueued(mclRemoteError,
                    "the communicator was aborted before this operation "
                    "started");
  py::gil_scoped_release release;
  mclCommAbort(handle);
}

void Communicator::abortForInterrupt() {
  // From the signal watcher (no GIL) or a wait (GIL held): only C calls.
  mclComm_t handle = takeHandle();
  if (handle == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(handleMutex_);
    closedReason_ = "aborted (Ctrl-C during a call)";
  }
  queue_.dropQueued(mclRemoteError, "the communicator was aborted by Ctrl-C");
  mclCommAbort(handle);
}

void Communicator::close() {
  if (closed()) {
    releaseFinishedOrphans();
    return;
  }
  drainQueue();
  mclComm_t handle = takeHandle();
  if (handle != nullptr) {
    {
      std::lock_guard<std::mutex> lock(handleMutex_);
      closedReason_ = "closed";
    }
    mclResult_t rc;
    std::string message;
    {
      py::gil_scoped_release release;
      rc = mclCommDestroy(handle);
      if (rc != mclSuccess) message = lastErrorText(rc);
    }
    releaseFinishedOrphans();
    if (rc != mclSuccess) fail(rc, message);
  }
  releaseFinishedOrphans();
}

void Communicator::adoptOrphans(std::shared_ptr<Completion> completion,
                                std::vector<BufferView> buffers) {
  orphans_.push_back(Orphan{std::move(completion), std::move(buffers)});
}

void Communicator::releaseFinishedOrphans() {
  std::erase_if(orphans_, [](const Orphan& o) { return o.completion->done(); });
}

std::string Communicator::topology() {
  mclComm_t handle = handleOrThrow();
  // The JSON's counters may grow by a digit between asking for the size
  // and asking for the text (collectives on other threads): ask again.
  for (int attempt = 0;; ++attempt) {
    size_t size = 0;
    check(mclCommGetTopology(handle, nullptr, &size));
    std::string json(size + 64, '\0');
    size = json.size();
    const mclResult_t rc = mclCommGetTopology(handle, json.data(), &size);
    if (rc == mclSuccess) {
      json.resize(size > 0 ? size - 1 : 0);
      return json;
    }
    if (rc != mclInvalidArgument || attempt == 4) check(rc);
  }
}

py::object Communicator::asyncError() {
  mclComm_t handle = handleOrThrow();
  mclResult_t state = mclSuccess;
  check(mclCommGetAsyncError(handle, &state));
  if (state == mclSuccess) return py::none();
  return makeError(state, std::string("the communicator failed: ") +
                              mclGetErrorString(state));
}

}  // namespace mcl::python
