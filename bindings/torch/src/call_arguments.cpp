#include "call_arguments.h"

#include "host_view.h"
#include "torch_version.h"

namespace mcl::torch_backend {

at::Tensor oneTensor(const std::vector<at::Tensor>& tensors,
                     const std::string& what) {
  if (tensors.size() != 1)
    throwValueError("mcl backend: " + what +
                    " takes one tensor per process, got " +
                    std::to_string(tensors.size()));
  checkMovable(tensors[0], what);
  return tensors[0];
}

void checkCount(size_t count, int groupSize, const std::string& what) {
  if (count != static_cast<size_t>(groupSize))
    throwValueError("mcl backend: " + what + " has " + std::to_string(count) +
                    " tensors; the group has " + std::to_string(groupSize) +
                    " ranks");
}

std::vector<at::Tensor> oneList(
    const std::vector<std::vector<at::Tensor>>& lists, int groupSize,
    const std::string& what) {
  if (lists.size() != 1)
    throwValueError("mcl backend: " + what +
                    " takes one list of tensors per process, got " +
                    std::to_string(lists.size()));
  checkCount(lists[0].size(), groupSize, what + "'s list");
  checkOneDevice(lists[0], what);
  return lists[0];
}

void checkPairs(size_t outputs, size_t inputs, const std::string& what) {
  if (outputs != inputs)
    throwValueError("mcl backend: " + what + ": " + std::to_string(outputs) +
                    " output tensors for " + std::to_string(inputs) +
                    " inputs; the lists pair up one to one");
  if (inputs == 0) throwValueError("mcl backend: " + what + ": no tensors");
}

void checkSameType(const std::vector<at::Tensor>& tensors,
                   const std::string& what) {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].scalar_type() != tensors[0].scalar_type())
      throwValueError("mcl backend: " + what + "[" + std::to_string(i) +
                      "] is " + c10::toString(tensors[i].scalar_type()) +
                      " and " + what + "[0] is " +
                      c10::toString(tensors[0].scalar_type()) +
                      "; a coalesced reduction takes one type");
}

void checkSized(const at::Tensor& got, const std::string& gotName,
                const at::Tensor& of, const std::string& ofName, int64_t factor,
                const std::string& what) {
  if (got.numel() != of.numel() * factor ||
      got.scalar_type() != of.scalar_type())
    throwValueError("mcl backend: " + what + ": " + gotName + " is " +
                    c10::toString(got.scalar_type()) + " x " +
                    std::to_string(got.numel()) + "; it must hold " +
                    std::to_string(factor) + " x " +
                    std::to_string(of.numel()) + " of " + ofName + "'s " +
                    c10::toString(of.scalar_type()));
}

at::Tensor bytesOf(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> flat;
  flat.reserve(tensors.size());
  for (const at::Tensor& t : tensors)
    flat.push_back(t.to(at::kCPU).contiguous().reshape({-1}).view(at::kByte));
  return at::cat(flat);
}

}  // namespace mcl::torch_backend
