#include "blocking_wait.h"

#include <pybind11/pybind11.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>

namespace py = pybind11;

namespace mcl::python {

bool waitInterruptibly(const Completion& completion,
                       std::optional<std::chrono::duration<double>> timeout,
                       const std::function<void()>& onInterrupt) {
  using Clock = std::chrono::steady_clock;
  // Short enough that Ctrl-C feels immediate, long enough to cost nothing.
  constexpr std::chrono::milliseconds kSlice(50);
  const auto start = Clock::now();
  for (;;) {
    auto slice = kSlice;
    if (timeout) {
      const auto left = *timeout - (Clock::now() - start);
      slice = std::clamp(
          std::chrono::duration_cast<std::chrono::milliseconds>(left),
          std::chrono::milliseconds(0), kSlice);
    }
    bool finished;
    {
      py::gil_scoped_release release;
      finished = completion.waitFor(slice);
    }
    if (finished) return true;
    if (PyErr_CheckSignals() != 0) {
      if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt) && onInterrupt) {
        // Keep the exception across the action (it may call into Python).
        py::error_already_set pending;
        onInterrupt();
        throw pending;
      }
      throw py::error_already_set();
    }
    if (timeout && Clock::now() - start >= *timeout) return false;
  }
}

}  // namespace mcl::python
