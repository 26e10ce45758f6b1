#include "device_kernels.h"

#include <torch/version.h>

#if TORCH_VERSION_MAJOR >= 2
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/Device.h>
#include <torch/library.h>

#include <memory>
#include <mutex>
#endif

namespace mcl::torch_backend {

#if TORCH_VERSION_MAJOR >= 2

namespace {

// c10d's operations that take tensors (Ops.cpp registers each per device).
constexpr const char* kOperations[] = {"send",
                                       "recv_",
                                       "recv_any_source_",
                                       "reduce_",
                                       "broadcast_",
                                       "allreduce_",
                                       "allreduce_coalesced_",
                                       "allgather_",
                                       "_allgather_base_",
                                       "allgather_coalesced_",
                                       "allgather_into_tensor_coalesced_",
                                       "reduce_scatter_",
                                       "_reduce_scatter_base_",
                                       "reduce_scatter_tensor_coalesced_",
                                       "alltoall_base_",
                                       "alltoall_",
                                       "gather_",
                                       "scatter_",
                                       "barrier",
                                       "monitored_barrier_"};

void runCpuKernel(const c10::OperatorHandle& op, c10::DispatchKeySet,
                  torch::jit::Stack* stack) {
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
}

}  // namespace

std::vector<std::string> addDeviceKernels(const std::string& deviceType) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<torch::Library>> libraries;
  const c10::DeviceType type = c10::Device(deviceType).type();
  const c10::DispatchKey key =
      c10::computeDispatchKey(c10::nullopt, c10::nullopt, c10::Device(type));
  std::vector<std::string> added;
  std::lock_guard<std::mutex> lock(mutex);
  auto library = std::make_unique<torch::Library>(torch::Library::IMPL, "c10d",
                                                  key, __FILE__, __LINE__);
  for (const char* name : kOperations) {
    auto op = c10::Dispatcher::singleton().findOp(
        c10::OperatorName(std::string("c10d::") + name, ""));
    if (!op || op->hasKernelForDispatchKey(key)) continue;
    library->impl(name,
                  torch::CppFunction::makeFromBoxedFunction<&runCpuKernel>());
    added.emplace_back(name);
  }
  libraries.push_back(std::move(library));
  return added;
}

#else

std::vector<std::string> addDeviceKernels(const std::string& deviceType) {
  (void)deviceType;
  return {};
}

#endif

}  // namespace mcl::torch_backend
