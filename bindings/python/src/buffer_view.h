// The memory behind a Python object, taken without a copy: the buffer
// protocol first (NumPy, memoryview, bytearray, array.array), else DLPack
// (__dlpack__: torch tensors and the like). The view keeps the object's
// memory alive until it is destroyed, which must happen with the GIL held.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "element_type.h"

namespace mcl::python {

class BufferView {
 public:
  enum class Access { Read, Write };

  // argument names the parameter in errors ("x", "out"). dtypeName, when
  // given, overrides the element type the object declares.
  static BufferView acquire(pybind11::handle object, Access access,
                            const char* argument,
                            const std::optional<std::string>& dtypeName);

  BufferView(BufferView&&) noexcept;
  BufferView& operator=(BufferView&&) noexcept;
  ~BufferView();

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  size_t elements() const {
    return type_.itemsize ? bytes_ / type_.itemsize : 0;
  }
  const ElementType& type() const { return type_; }
  const std::vector<ptrdiff_t>& shape() const { return shape_; }

 private:
  BufferView() = default;
  static BufferView fromBufferProtocol(pybind11::handle object, Access access,
                                       const char* argument);
  static BufferView fromDlpack(pybind11::handle object, const char* argument);

  void* data_ = nullptr;
  size_t bytes_ = 0;
  ElementType type_;
  std::vector<ptrdiff_t> shape_;
  // Whichever holds the memory: a Py_buffer, or the DLPack capsule (its
  // destructor calls the producer's deleter once we drop it).
  std::unique_ptr<Py_buffer> buffer_;
  pybind11::object capsule_;
};

void registerBufferViews(pybind11::module_& m);

}  // namespace mcl::python
