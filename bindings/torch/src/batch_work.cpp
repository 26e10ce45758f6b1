#include "batch_work.h"

#include <ATen/core/jit_type.h>

#include <exception>
#include <utility>

namespace mcl::torch_backend {

BatchWork::BatchWork(int rank,
                     std::vector<c10::intrusive_ptr<c10d::Work>> works)
    : c10d::Work(rank, c10d::OpType::UNKNOWN), works_(std::move(works)) {}

bool BatchWork::isCompleted() {
  for (auto& work : works_)
    if (!work->isCompleted()) return false;
  return true;
}

bool BatchWork::isSuccess() const {
  for (const auto& work : works_)
    if (!work->isSuccess()) return false;
  return true;
}

std::exception_ptr BatchWork::exception() const {
  for (const auto& work : works_)
    if (auto failure = work->exception()) return failure;
  return nullptr;
}

bool BatchWork::wait(std::chrono::milliseconds timeout) {
  std::exception_ptr first;
  for (auto& work : works_) {
    try {
      work->wait(timeout);
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
  return true;
}

c10::intrusive_ptr<c10::ivalue::Future> BatchWork::getFuture() {
  c10::List<c10::intrusive_ptr<c10::ivalue::Future>> futures(
      c10::FutureType::create(c10::ListType::create(c10::TensorType::get())));
  for (auto& work : works_) futures.push_back(work->getFuture());
  return c10::collectAll(futures);
}

}  // namespace mcl::torch_backend
