// The checks every operation makes on what c10d hands it, before anything
// is sent: each names the operation and the tensor at fault.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

namespace mcl::torch_backend {

// The one tensor of a call (c10d passes a list: one per device in the
// days of several GPUs per process), checked movable.
at::Tensor oneTensor(const std::vector<at::Tensor>& tensors,
                     const std::string& what);

// The one list of tensors (one per rank) of a gather-like call, of the
// group's size, each movable and on one device.
std::vector<at::Tensor> oneList(
    const std::vector<std::vector<at::Tensor>>& lists, int groupSize,
    const std::string& what);

void checkCount(size_t count, int groupSize, const std::string& what);

// Two lists of a coalesced call pair up one to one, and are not empty.
void checkPairs(size_t outputs, size_t inputs, const std::string& what);

// Coalesced reductions take one element type.
void checkSameType(const std::vector<at::Tensor>& tensors,
                   const std::string& what);

// `got` holds `factor` times `of`'s elements, of its type.
void checkSized(const at::Tensor& got, const std::string& gotName,
                const at::Tensor& of, const std::string& ofName, int64_t factor,
                const std::string& what);

// The tensors' contents side by side, as bytes (one host tensor).
at::Tensor bytesOf(const std::vector<at::Tensor>& tensors);

}  // namespace mcl::torch_backend
