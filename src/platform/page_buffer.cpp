#include "platform/page_buffer.h"

#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "platform/system_error.h"

namespace mcl::platform {

size_t pageSize() {
  static const size_t page = [] {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<size_t>(p) : size_t{4096};
  }();
  return page;
}

PageBuffer::PageBuffer(size_t bytes) : bytes_(bytes) {
  const size_t page = pageSize();
  paged_ = (bytes + page - 1) / page * page;
  if (paged_ == 0) paged_ = page;
  void* p = nullptr;
  if (int err = posix_memalign(&p, page, paged_))
    throwSystemError(
        "allocating " + std::to_string(paged_) + " page-aligned bytes", err);
  std::memset(p, 0, paged_);
  data_ = static_cast<std::byte*>(p);
}

PageBuffer::~PageBuffer() { std::free(data_); }

PageBuffer::PageBuffer(PageBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      paged_(std::exchange(other.paged_, 0)) {}

PageBuffer& PageBuffer::operator=(PageBuffer&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    paged_ = std::exchange(other.paged_, 0);
  }
  return *this;
}

}  // namespace mcl::platform
