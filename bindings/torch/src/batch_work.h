// The one work handle of a batch (PyTorch 2's coalescing manager, and
// batch_isend_irecv on CUDA tensors): done when every work of the batch
// is; wait() waits for all of them and raises the first failure.
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <vector>

namespace mcl::torch_backend {

class BatchWork : public c10d::Work {
 public:
  BatchWork(int rank, std::vector<c10::intrusive_ptr<c10d::Work>> works);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  bool wait(std::chrono::milliseconds timeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

 private:
  std::vector<c10::intrusive_ptr<c10d::Work>> works_;
};

}  // namespace mcl::torch_backend
