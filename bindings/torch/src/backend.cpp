#include "backend.h"

#include <utility>

#include "batch_work.h"
#include "mcl_api.h"

namespace mcl::torch_backend {

namespace py = pybind11;

namespace {

// How long a caller waits for an operation another thread runs, beyond
// the group's timeout that bounds each of its mcl calls.
std::chrono::milliseconds waitLimit(int timeoutSeconds) {
  return std::chrono::seconds(2 * static_cast<int64_t>(timeoutSeconds) + 30);
}

}  // namespace

Backend::Backend(int rank, int size, const std::string& uniqueId,
                 int timeoutSeconds, py::object helper)
    : BackendBase(rank, size),
      timeoutSeconds_(timeoutSeconds),
      helper_(std::move(helper)),
      buffers_(HostBuffers::create()) {
  const python::CApiTable& mcl = api();
  mclUniqueId id;
  check(mcl.uniqueIdFromString(uniqueId.c_str(), &id), "init_process_group");
  mclConfig_t config = MCL_CONFIG_INITIALIZER;
  config.timeoutSeconds = timeoutSeconds;
  config.commName = "torch";
  mclResult_t result;
  {
    py::gil_scoped_release released;
    result = mcl.commInitRankConfig(&comm_, size, id, rank, &config);
  }
  check(result, "init_process_group");
  queue_ = std::make_shared<OperationQueue>(waitLimit(timeoutSeconds));
}

Backend::~Backend() {
  try {
    close();
  } catch (...) {
    // A destructor cannot report; close() said what it could.
  }
}

void Backend::close() {
  // Queued work finishes first, without the GIL: DDP's callbacks that run
  // as work completes may need it.
  if (queue_ != nullptr) {
    if (Py_IsInitialized() && PyGILState_Check()) {
      py::gil_scoped_release released;
      queue_->stop();
    } else {
      queue_->stop();
    }
  }
  std::exception_ptr failure;
  if (helper_ && Py_IsInitialized()) {
    py::gil_scoped_acquire gil;
    py::object helper = std::move(helper_);
    try {
      helper.attr("close")();
    } catch (...) {
      failure = std::current_exception();  // the communicator goes anyway
    }
  } else if (helper_) {
    helper_.release();  // the interpreter is gone: nothing left to free
  }
  if (comm_ != nullptr) {
    mclComm_t comm = comm_;
    comm_ = nullptr;
    api().commDestroy(comm);
  }
  if (failure) std::rethrow_exception(failure);
}

std::string Backend::topology() const {
  std::vector<char> json(1 << 16);
  size_t length = json.size();
  mclResult_t result;
  while ((result = api().commGetTopology(comm("topology"), json.data(),
                                         &length)) == mclInvalidArgument &&
         length > json.size())
    json.resize(length);
  check(result, "topology");
  return std::string(json.data());
}

mclComm_t Backend::comm(const char* what) const {
  if (comm_ == nullptr)
    throwValueError(std::string("mcl backend: ") + what +
                    ": the process group is closed");
  return comm_;
}

void Backend::check(mclResult_t result, const char* what) const {
  torch_backend::check(result, comm_, what, timeoutSeconds_);
}

void Backend::checkRoot(int64_t root, const char* what) const {
  if (root < 0 || root >= getSize())
    throwValueError(std::string("mcl backend: ") + what + ": root rank " +
                    std::to_string(root) + " is not in the group (ranks 0 to " +
                    std::to_string(getSize() - 1) + ")");
}

void Backend::inGroup(const char* what,
                      const std::function<void()>& calls) const {
  check(api().groupStart(), what);
  try {
    calls();
  } catch (...) {
    api().groupEnd();
    throw;
  }
  check(api().groupEnd(), what);
}

c10::intrusive_ptr<c10d::Work> Backend::tracked(
    c10::intrusive_ptr<c10d::Work> work) {
  if (coalescing_) coalesced_.push_back(work);
  return work;
}

c10::intrusive_ptr<c10d::Work> Backend::enqueue(c10d::OpType type,
                                                OrderedWork::Body body,
                                                bool callerWaits) {
  auto work = c10::make_intrusive<OrderedWork>(getRank(), type, std::move(body),
                                               queue_);
  // A batch is waited for as one, at its end.
  queue_->submit(work, callerWaits && !coalescing_);
  return tracked(work);
}

#if TORCH_VERSION_MAJOR >= 2
void Backend::startCoalescing() {
  if (coalescing_)
    throwValueError(
        "mcl backend: a batch (coalescing manager) is already open");
  coalescing_ = true;
  coalesced_.clear();
}

c10::intrusive_ptr<c10d::Work> Backend::endCoalescing() {
  coalescing_ = false;
  auto work = c10::make_intrusive<BatchWork>(getRank(), std::move(coalesced_));
  coalesced_.clear();
  return work;
}
#endif

c10::intrusive_ptr<c10d::Work> Backend::barrier(
    const c10d::BarrierOptions& opts) {
  mclComm_t c = comm("barrier");
  return enqueue(
      c10d::OpType::BARRIER,
      [this, c] {
        check(api().barrier(c, nullptr), "barrier");
        return std::vector<at::Tensor>();
      },
      callerWaitsAtOnce(opts));
}

}  // namespace mcl::torch_backend
