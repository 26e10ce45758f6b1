#include "host_view.h"

#include <c10/core/DeviceType.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include "torch_version.h"

namespace mcl::torch_backend {

void checkMovable(const at::Tensor& t, const std::string& what) {
  if (!t.defined())
    throwTypeError("mcl backend: " + what + ": expected a tensor, got none");
  if (t.is_meta())
    throwValueError("mcl backend: " + what +
                    ": the tensor is on meta, which holds no data to send: "
                    "mcl moves tensors of any device whose data can be "
                    "copied to the host (cpu, mps, cuda, ...)");
  if (t.is_sparse())
    throwValueError("mcl backend: " + what + ": the tensor is sparse (" +
                    c10::str(t.layout()) + "); mcl moves dense tensors");
}

void checkOneDevice(const std::vector<at::Tensor>& tensors,
                    const std::string& what) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    checkMovable(tensors[i], what + "[" + std::to_string(i) + "]");
    if (tensors[i].device() != tensors[0].device())
      throwValueError("mcl backend: " + what + ": tensor " + std::to_string(i) +
                      " is on " + tensors[i].device().str() +
                      " and tensor 0 on " + tensors[0].device().str() +
                      "; one call takes tensors of one device");
  }
}

HostView::HostView(const at::Tensor& target, Use use, HostBuffers& pool)
    : target_(target), reads_(use != Use::Write), writes_(use != Use::Read) {
  if (target.device().is_cpu()) {
    copy_ = !target.is_contiguous();
    host_ = copy_ ? at::empty(target.sizes(), target.options()) : target;
    return;
  }
  copy_ = true;
  lease_ = pool.take(target.nbytes());
  host_ = at::from_blob(lease_->data, target.sizes(),
                        target.options().device(at::kCPU));
  const c10::DeviceType type = target.device().type();
  if (c10::impl::hasDeviceGuardImpl(type))
    stream_ = c10::impl::VirtualGuardImpl(type).getStream(target.device());
}

void HostView::fill() {
  if (!copy_ || !reads_) return;
  c10::OptionalStreamGuard guard(stream_);
  host_.copy_(target_);
}

void HostView::finish() {
  if (!copy_ || !writes_) return;
  c10::OptionalStreamGuard guard(stream_);
  target_.copy_(host_);
}

}  // namespace mcl::torch_backend
