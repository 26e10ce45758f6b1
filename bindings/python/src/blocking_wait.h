// Waiting on a background operation without ignoring Ctrl-C: the GIL is
// let go in short slices, and Python's signal handlers run in between.
#pragma once

#include <chrono>
#include <functional>
#include <optional>

#include "op_queue.h"

namespace mcl::python {

// Waits until `completion` is done or `timeout` passes (nullopt: no limit
// of its own). Returns whether it is done. A signal handler that raises
// ends the wait with that exception (pybind11::error_already_set); when it
// is KeyboardInterrupt, `onInterrupt` runs first.
bool waitInterruptibly(const Completion& completion,
                       std::optional<std::chrono::duration<double>> timeout,
                       const std::function<void()>& onInterrupt);

}  // namespace mcl::python
