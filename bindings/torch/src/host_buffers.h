// Host memory the backend stages tensors through: mclMemAlloc memory (so
// a staged call runs at the speed of memory mcl can share zero-copy and
// register), one buffer per size class, kept and reused.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace mcl::torch_backend {

class HostBuffers : public std::enable_shared_from_this<HostBuffers> {
 public:
  // A buffer of at least the bytes asked for, back in the pool when the
  // last copy of the lease goes.
  struct Lease {
    void* data = nullptr;
    size_t capacity = 0;
    std::shared_ptr<HostBuffers> pool;
    ~Lease();
  };

  static std::shared_ptr<HostBuffers> create();
  ~HostBuffers();  // frees every buffer (the leases keep the pool alive)

  // Throws the backend error naming the size when mclMemAlloc fails.
  std::shared_ptr<Lease> take(size_t bytes);

 private:
  HostBuffers() = default;
  void giveBack(void* data, size_t capacity);

  std::mutex mutex_;
  std::map<size_t, std::vector<void*>> idle_;  // by size class
};

}  // namespace mcl::torch_backend
