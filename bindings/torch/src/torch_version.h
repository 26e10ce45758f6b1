// What differs between the PyTorch versions the backend builds against
// (Debian 12's 1.13, Debian 13's 2.6, the newest pip gives): the class a
// backend derives from, the error torch raises for a failed communication,
// and whether an operation's options say the caller waits at once.
#pragma once

#include <torch/version.h>

#include <string>
#include <type_traits>
#include <utility>

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#endif

namespace mcl::torch_backend {

#if TORCH_VERSION_MAJOR >= 2
// PyTorch 2 splits the process group (what Python holds) from the backend
// of each device type; c10d's dispatcher calls the backend.
using BackendBase = c10d::Backend;
inline constexpr bool kSplitProcessGroup = true;
#else
// PyTorch 1.13 calls the process group's virtual methods directly.
using BackendBase = c10d::ProcessGroup;
inline constexpr bool kSplitProcessGroup = false;
#endif

// A failed communication: torch.distributed.DistBackendError on PyTorch 2
// (a RuntimeError), RuntimeError on 1.13, as Gloo's and NCCL's.
[[noreturn]] void throwBackendError(const std::string& message);

// Bad arguments: Python's ValueError / TypeError.
[[noreturn]] void throwValueError(const std::string& message);
[[noreturn]] void throwTypeError(const std::string& message);

// Whether an operation's options say the caller waits for it at once
// (PyTorch 2.7+ passes async_op there; older ones leave it unknown).
template <typename Options, typename = void>
struct HasAsyncOp : std::false_type {};
template <typename Options>
struct HasAsyncOp<Options,
                  std::void_t<decltype(std::declval<Options>().asyncOp)>>
    : std::true_type {};

template <typename Options>
bool callerWaitsAtOnce(const Options& options) {
  if constexpr (HasAsyncOp<Options>::value) {
    return !options.asyncOp;
  } else {
    (void)options;
    return false;
  }
}

}  // namespace mcl::torch_backend
