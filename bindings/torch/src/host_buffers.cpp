#include "host_buffers.h"

#include <string>

#include "mcl_api.h"
#include "torch_version.h"

namespace mcl::torch_backend {

namespace {

// Powers of two from 4 KiB: a size asked for again finds its buffer, and
// a pool of mixed sizes wastes at most half of each buffer.
size_t sizeClass(size_t bytes) {
  size_t capacity = 4096;
  while (capacity < bytes) capacity *= 2;
  return capacity;
}

}  // namespace

HostBuffers::Lease::~Lease() {
  if (data != nullptr) pool->giveBack(data, capacity);
}

std::shared_ptr<HostBuffers> HostBuffers::create() {
  return std::shared_ptr<HostBuffers>(new HostBuffers());
}

HostBuffers::~HostBuffers() {
  for (auto& [capacity, buffers] : idle_)
    for (void* data : buffers) api().memFree(data);
}

std::shared_ptr<HostBuffers::Lease> HostBuffers::take(size_t bytes) {
  const size_t capacity = sizeClass(bytes);
  auto lease = std::make_shared<Lease>();
  lease->capacity = capacity;
  lease->pool = shared_from_this();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& idle = idle_[capacity];
    if (!idle.empty()) {
      lease->data = idle.back();
      idle.pop_back();
      return lease;
    }
  }
  const mclResult_t result = api().memAlloc(&lease->data, capacity);
  if (result != mclSuccess) {
    lease->data = nullptr;
    throwBackendError("mcl backend: cannot allocate " +
                      std::to_string(capacity) +
                      " bytes of host memory to stage a tensor through: " +
                      api().getErrorString(result));
  }
  return lease;
}

void HostBuffers::giveBack(void* data, size_t capacity) {
  std::lock_guard<std::mutex> lock(mutex_);
  idle_[capacity].push_back(data);
}

}  // namespace mcl::torch_backend
