// An operation started with async_op=True: its completion, and the buffers
// it uses, kept alive until it is done.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "buffer_view.h"
#include "op_queue.h"

namespace mcl::python {

class Communicator;

class Work {
 public:
  Work(std::shared_ptr<Communicator> comm,
       std::shared_ptr<Completion> completion, std::vector<BufferView> buffers,
       std::string name);
  ~Work();
  Work(Work&&) = default;

  bool isCompleted() const { return completion_->done(); }
  // True when done (raising the operation's error, if any), false when
  // `timeoutSeconds` passed first.
  bool wait(std::optional<double> timeoutSeconds);
  const std::string& name() const { return name_; }

 private:
  std::shared_ptr<Communicator> comm_;
  std::shared_ptr<Completion> completion_;
  std::vector<BufferView> buffers_;
  std::string name_;
};

void registerWork(pybind11::module_& m);

}  // namespace mcl::python
