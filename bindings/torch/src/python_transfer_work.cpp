#include "python_transfer_work.h"

#include <torch/csrc/jit/python/pybind_utils.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace mcl::torch_backend {

namespace py = pybind11;

PythonTransferWork::PythonTransferWork(int rank, c10d::OpType type,
                                       py::object transfer)
    : c10d::Work(rank, type), transfer_(std::move(transfer)) {}

PythonTransferWork::~PythonTransferWork() {
  if (!Py_IsInitialized()) {
    transfer_.release();  // the interpreter is gone: nothing to free
    return;
  }
  py::gil_scoped_acquire gil;
  transfer_ = py::object();
}

bool PythonTransferWork::isCompleted() {
  py::gil_scoped_acquire gil;
  return transfer_.attr("done")().cast<bool>();
}

bool PythonTransferWork::isSuccess() const {
  py::gil_scoped_acquire gil;
  return transfer_.attr("done")().cast<bool>() &&
         transfer_.attr("failed")().is_none();
}

std::exception_ptr PythonTransferWork::exception() const {
  py::gil_scoped_acquire gil;
  py::object failed = transfer_.attr("failed")();
  if (failed.is_none()) return nullptr;
  return std::make_exception_ptr(
      std::runtime_error(py::str(failed).cast<std::string>()));
}

int PythonTransferWork::sourceRank() const {
  py::gil_scoped_acquire gil;
  py::object source = transfer_.attr("source");
  if (source.is_none())
    throw std::runtime_error("mcl backend: the receive has not completed");
  return source.cast<int>();
}

std::vector<at::Tensor> PythonTransferWork::result() {
  wait(std::chrono::milliseconds(0));
  return {};
}

bool PythonTransferWork::wait(std::chrono::milliseconds timeout) {
  (void)timeout;  // the transfer is bounded by the group's timeout
  py::gil_scoped_acquire gil;
  transfer_.attr("wait")();  // raises the transfer's error
  return true;
}

c10::intrusive_ptr<c10::ivalue::Future> PythonTransferWork::getFuture() {
  py::gil_scoped_acquire gil;
  return transfer_.attr("future")
      .cast<std::shared_ptr<torch::jit::PythonFutureWrapper>>()
      ->fut;
}

}  // namespace mcl::torch_backend
