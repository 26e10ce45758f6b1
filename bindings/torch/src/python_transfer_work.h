// The work handle of a send or receive run by the Python engine
// (mcl/_torch_p2p.py): its transfer object, asked under the GIL. c10d
// gets a C++ handle that holds the Python object, so the transfer lives as
// long as the handle, whoever holds it.
#pragma once

#include <pybind11/pybind11.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <vector>

namespace mcl::torch_backend {

class PythonTransferWork : public c10d::Work {
 public:
  PythonTransferWork(int rank, c10d::OpType type, pybind11::object transfer);
  ~PythonTransferWork() override;

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  int sourceRank() const override;
  std::vector<at::Tensor> result() override;
  bool wait(std::chrono::milliseconds timeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

 private:
  pybind11::object transfer_;
};

}  // namespace mcl::torch_backend
