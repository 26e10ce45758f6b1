// Zeroed memory that starts and ends on page boundaries: what mcl registers
// with a verbs provider. Apple's provider is known to work with page-aligned
// registrations only (MLX's JACCL allocates them so; Apple Silicon pages
// are 16 KiB), and a registration pins whole pages anyway.
#pragma once

#include <cstddef>

namespace mcl::platform {

// The system's page size (16 KiB on Apple Silicon, usually 4 KiB on x86).
size_t pageSize();

class PageBuffer {
 public:
  PageBuffer() = default;
  // Throws std::system_error (system_error.h) naming the size when memory runs
  // out.
  explicit PageBuffer(size_t bytes);
  ~PageBuffer();
  PageBuffer(PageBuffer&& other) noexcept;
  PageBuffer& operator=(PageBuffer&& other) noexcept;
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;

  std::byte* data() const { return data_; }
  size_t size() const { return bytes_; }  // as asked for
  // The registered span: the size rounded up to whole pages.
  size_t pagedSize() const { return paged_; }

 private:
  std::byte* data_ = nullptr;
  size_t bytes_ = 0;
  size_t paged_ = 0;
};

}  // namespace mcl::platform
