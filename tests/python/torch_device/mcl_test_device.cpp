// A device for the tests of mcl.torch's staged path: PyTorch's extension
// point for out-of-tree devices (PrivateUse1, "privateuseone"), as
// PyTorch's own open_registration_extension test uses it. Its tensors
// live in host memory but are not CPU tensors, and two things make a
// backend that skips a step fail:
//   - its memory holds every byte XOR 0x5A: a backend that reads or
//     writes a tensor's memory itself instead of copying it through torch
//     (the device's copy kernels) sees, or leaves, garbage;
//   - fill_ runs later, on the device's own queue (after 20 ms), as a GPU
//     kernel does: a backend that copies a tensor out without the device's
//     synchronization (a blocking copy waits for the queue) sends the
//     value from before the fill.
// Built by the tests with torch.utils.cpp_extension.load.
#include <ATen/EmptyTensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/extension.h>
#include <torch/version.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace {

constexpr uint8_t kScramble = 0x5A;
constexpr c10::DeviceType kType = c10::DeviceType::PrivateUse1;

void scrambledCopy(void* dest, const void* src, size_t n) {
  auto* d = static_cast<uint8_t*>(dest);
  const auto* s = static_cast<const uint8_t*>(src);
  for (size_t i = 0; i < n; ++i) d[i] = s[i] ^ kScramble;
}

// The device's queue: work that runs later, in order, on a thread of its
// own; synchronize() waits until it is empty.
class DeviceQueue {
 public:
  DeviceQueue() : thread_([this] { serve(); }) { thread_.detach(); }
  void push(std::function<void()> task) {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
    changed_.notify_all();
  }
  void synchronize() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return tasks_.empty() && !busy_; });
  }

 private:
  void serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      changed_.wait(lock, [this] { return !tasks_.empty(); });
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      busy_ = true;
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      task();
      lock.lock();
      busy_ = false;
      changed_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> tasks_;
  bool busy_ = false;
  std::thread thread_;
};

DeviceQueue& queue() {
  static DeviceQueue* q = new DeviceQueue();  // lives as long as the process
  return *q;
}

struct ScrambledAllocator final : c10::Allocator {
#if TORCH_VERSION_MAJOR > 2 || \
    (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  c10::DataPtr allocate(size_t n) override {
#else
  c10::DataPtr allocate(size_t n) const override {
#endif
    void* data = std::calloc(n == 0 ? 1 : n, 1);
    std::memset(data, kScramble, n);  // zeros, as the device stores them
    return {data, data, &std::free, c10::Device(kType, 0)};
  }
#if TORCH_VERSION_MAJOR > 2 || \
    (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  void copy_data(void* dest, const void* src,
                 std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
#endif
};

ScrambledAllocator allocator;

at::Tensor deviceEmpty(c10::IntArrayRef size,
                       c10::optional<at::ScalarType> dtype,
                       c10::optional<at::Layout>, c10::optional<at::Device>,
                       c10::optional<bool>,
                       c10::optional<at::MemoryFormat> format) {
  return at::detail::empty_generic(
      size, &allocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
      c10::dtype_or_default(dtype), format);
}

at::Tensor deviceEmptyStrided(c10::IntArrayRef size, c10::IntArrayRef stride,
                              c10::optional<at::ScalarType> dtype,
                              c10::optional<at::Layout>,
                              c10::optional<at::Device>, c10::optional<bool>) {
  return at::detail::empty_strided_generic(
      size, stride, &allocator,
      c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
      c10::dtype_or_default(dtype));
}

// Copies between the host and the device (and within the device), after
// the device's queue: a blocking copy, as torch's copy_ promises.
at::Tensor deviceCopyFrom(const at::Tensor& self, const at::Tensor& dst,
                          bool nonBlocking) {
  (void)nonBlocking;
  queue().synchronize();
  TORCH_CHECK(self.sizes() == dst.sizes() && self.dtype() == dst.dtype(),
              "mcl_test_device: copies between tensors of one shape and type");
  // Through contiguous host tensors: plain bytes on the host side.
  at::Tensor plain =
      self.device().type() == kType
          ? at::empty(self.sizes(), self.options().device(at::kCPU))
          : self.contiguous();
  if (self.device().type() == kType) {
    TORCH_CHECK(self.is_contiguous(), "mcl_test_device: contiguous only");
    scrambledCopy(plain.data_ptr(), self.data_ptr(), self.nbytes());
  }
  if (dst.device().type() == kType) {
    TORCH_CHECK(dst.is_contiguous(), "mcl_test_device: contiguous only");
    scrambledCopy(dst.data_ptr(), plain.data_ptr(), plain.nbytes());
  } else {
    dst.copy_(plain);
  }
  return dst;
}

at::Tensor deviceCopyFromAndResize(const at::Tensor& self,
                                   const at::Tensor& dst) {
  return deviceCopyFrom(self, dst, false);
}

// Runs later, on the device's queue.
at::Tensor& deviceFill(at::Tensor& self, const at::Scalar& value) {
  TORCH_CHECK(self.is_contiguous(), "mcl_test_device: contiguous only");
  at::Tensor plain =
      at::full(self.sizes(), value, self.options().device(at::kCPU));
  void* data = self.data_ptr();
  auto keep = self;
  queue().push([data, plain, keep] {
    scrambledCopy(data, plain.data_ptr(), plain.nbytes());
  });
  return self;
}

struct GuardImpl final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kType; }
  c10::Device exchangeDevice(c10::Device) const override {
    return c10::Device(kType, 0);
  }
  c10::Device getDevice() const override { return c10::Device(kType, 0); }
  void setDevice(c10::Device) const override {}
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device d) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, d);
  }
  c10::Stream exchangeStream(c10::Stream s) const noexcept override {
    return s;
  }
  c10::DeviceIndex deviceCount() const noexcept override { return 1; }
  void record(void** event, const c10::Stream&, const c10::DeviceIndex,
              const c10::EventFlag) const override {
    *event = nullptr;
  }
  void block(void*, const c10::Stream&) const override {
    queue().synchronize();
  }
  bool queryEvent(void*) const override { return true; }
  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
};

}  // namespace

C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl);

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", &deviceEmpty);
  m.impl("empty_strided", &deviceEmptyStrided);
  m.impl("_copy_from", &deviceCopyFrom);
  m.impl("_copy_from_and_resize", &deviceCopyFromAndResize);
  m.impl("fill_.Scalar", &deviceFill);
}

// PyTorch lets autograd fall through for the devices it knows (MPS among
// them); a device registered from outside declares it, where nobody has.
void letAutogradFallThrough() {
  static std::unique_ptr<torch::Library> library;
  if (library != nullptr ||
      c10::Dispatcher::singleton().hasBackendFallbackForDispatchKey(
          c10::DispatchKey::AutogradPrivateUse1))
    return;
  library = std::make_unique<torch::Library>(
      torch::Library::IMPL, "_", c10::DispatchKey::AutogradPrivateUse1,
      __FILE__, __LINE__);
  library->fallback(torch::CppFunction::makeFallthrough());
}

// Waits for the device's queue (what torch.<device>.synchronize() does).
void synchronize() { queue().synchronize(); }

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  letAutogradFallThrough();
  m.def("synchronize", &synchronize);
}
