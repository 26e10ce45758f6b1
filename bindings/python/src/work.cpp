#include "work.h"

#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "blocking_wait.h"
#include "communicator.h"
#include "errors.h"

namespace py = pybind11;

namespace mcl::python {

Work::Work(std::shared_ptr<Communicator> comm,
           std::shared_ptr<Completion> completion,
           std::vector<BufferView> buffers, std::string name)
    : comm_(std::move(comm)),
      completion_(std::move(completion)),
      buffers_(std::move(buffers)),
      name_(std::move(name)) {}

Work::~Work() {
  // Dropped while running: the communicator keeps the buffers until the
  // operation lets go of them.
  if (comm_ && completion_ && !completion_->done() && !buffers_.empty())
    comm_->adoptOrphans(completion_, std::move(buffers_));
}

bool Work::wait(std::optional<double> timeoutSeconds) {
  std::optional<std::chrono::duration<double>> timeout;
  if (timeoutSeconds) {
    if (std::isnan(*timeoutSeconds) || *timeoutSeconds < 0)
      invalidArgument("timeout " + std::to_string(*timeoutSeconds) +
                      " is not a number of seconds >= 0");
    // Beyond a few decades is "no limit" (and would overflow the clock).
    if (*timeoutSeconds < 1e9)
      timeout = std::chrono::duration<double>(*timeoutSeconds);
  }
  auto comm = comm_;
  const bool done = waitInterruptibly(*completion_, timeout, [comm] {
    if (comm) comm->abortForInterrupt();
  });
  if (!done) return false;
  buffers_.clear();  // done with them; the GIL is held here
  if (completion_->code() != mclSuccess)
    fail(completion_->code(), completion_->message());
  return true;
}

void registerWork(py::module_& m) {
  py::class_<Work>(m, "Work")
      .def("is_completed", &Work::isCompleted)
      .def("wait", &Work::wait, py::arg("timeout") = py::none())
      .def_property_readonly("name", &Work::name);
}

}  // namespace mcl::python
