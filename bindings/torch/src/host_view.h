// One tensor of an operation as mcl reads or writes it: contiguous, in
// host memory. That is the tensor itself when it is a contiguous CPU
// tensor; else a host copy (of a tensor on another device, through the
// pool of mclMemAlloc buffers; of a CPU tensor that is not contiguous, a
// contiguous one), written back by finish() when the operation writes it.
#pragma once

#include <ATen/ATen.h>
#include <c10/core/Stream.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "host_buffers.h"

namespace mcl::torch_backend {

// Throws, naming `what` and the device, for a tensor mcl cannot move:
// undefined, sparse, or on a device that holds no data (meta).
void checkMovable(const at::Tensor& t, const std::string& what);

// Throws, naming both, when the tensors of one call are on two devices.
void checkOneDevice(const std::vector<at::Tensor>& tensors,
                    const std::string& what);

class HostView {
 public:
  enum class Use { Read, Write, ReadWrite };

  // Finds the host memory; copies nothing yet.
  HostView(const at::Tensor& target, Use use, HostBuffers& pool);

  const at::Tensor& host() const { return host_; }
  void* data() const { return host_.data_ptr(); }
  size_t bytes() const { return host_.nbytes(); }

  // When the operation runs (in issue order, so an operation sees what the
  // ones before it wrote): copies the caller's tensor in, where the view
  // is a copy the operation reads, on the stream the call was made on,
  // after what that stream had queued (a blocking copy).
  void fill();

  // Writes the result back into the caller's tensor (when the operation
  // writes it and the view is a copy), on the stream the call was made
  // on, and waits for it: the result is there when the work is done.
  void finish();

 private:
  at::Tensor target_;
  at::Tensor host_;
  std::shared_ptr<HostBuffers::Lease> lease_;
  bool copy_ = false;  // host_ is not the caller's tensor
  bool reads_ = false;
  bool writes_ = false;
  c10::optional<c10::Stream> stream_;
};

}  // namespace mcl::torch_backend
