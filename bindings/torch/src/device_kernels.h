// c10d's operations for tensors of devices PyTorch 2 has no c10d kernels
// for (MPS: torch 2.6 registers CPU, CUDA and PrivateUse1 only), so that
// dist.all_reduce(mps_tensor) reaches the backend, which stages it.
#pragma once

#include <string>
#include <vector>

namespace mcl::torch_backend {

// Registers, for the device type named (as torch.device names it), a
// kernel for each of c10d's operations that has none, which runs the CPU
// kernel: it calls the group's backend, registered for the device too.
// Returns the operations it registered; none on PyTorch 1.x (it calls the
// process group directly).
std::vector<std::string> addDeviceKernels(const std::string& deviceType);

}  // namespace mcl::torch_backend
