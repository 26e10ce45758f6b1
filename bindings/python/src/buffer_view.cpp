#include "buffer_view.h"

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "errors.h"

namespace py = pybind11;

namespace mcl::python {
namespace {

constexpr const char* kCapsuleName = "dltensor";

std::string typeName(py::handle object) {
  return Py_TYPE(object.ptr())->tp_name;
}

// DLPack strides count elements; NULL means compact row-major.
bool compactRowMajor(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  for (int d = 0; d < t.ndim; ++d)
    if (t.shape[d] == 0) return true;  // no elements: any strides do
  int64_t expected = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

// ml_dtypes (JAX's bfloat16 and 8-bit floats for NumPy) exports a format
// that says nothing; its dtype's name does.
ElementType namedByDtype(py::handle object, const ElementType& fallback) {
  static constexpr std::pair<const char*, const char*> kNames[] = {
      {"bfloat16", "bfloat16"},
      {"float8_e4m3fn", "float8_e4m3"},
      {"float8_e5m2", "float8_e5m2"}};
  if (!py::hasattr(object, "dtype")) return fallback;
  py::object dtype = object.attr("dtype");
  if (!py::hasattr(dtype, "name")) return fallback;
  const std::string name = py::str(dtype.attr("name"));
  for (const auto& [theirs, ours] : kNames)
    if (name == theirs)
      return elementTypeFromName(ours, fallback.itemsize, "x");
  return fallback;
}

}  // namespace

BufferView::BufferView(BufferView&&) noexcept = default;
BufferView& BufferView::operator=(BufferView&&) noexcept = default;

BufferView::~BufferView() {
  if (buffer_) PyBuffer_Release(buffer_.get());
}

BufferView BufferView::acquire(py::handle object, Access access,
                               const char* argument,
                               const std::optional<std::string>& dtypeName) {
  if (object.is_none())
    invalidArgument(std::string(argument) + " is None: pass an array");
  BufferView view;
  if (PyObject_CheckBuffer(object.ptr())) {
    view = fromBufferProtocol(object, access, argument);
  } else if (py::hasattr(object, "__dlpack__")) {
    // DLPack before 1.0 cannot say "read-only"; JAX's arrays always are.
    const std::string module =
        py::str(py::type::handle_of(object).attr("__module__"));
    if (access == Access::Write && module.starts_with("jax"))
      invalidArgument(std::string(argument) + ": a " + typeName(object) +
                      " is immutable: results need a writable array "
                      "(NumPy, torch)");
    view = fromDlpack(object, argument);
  } else {
    throw py::type_error(std::string(argument) + ": a " + typeName(object) +
                         " is not an array (pass an object with the buffer "
                         "protocol, such as a NumPy array, or with "
                         "__dlpack__)");
  }
  if (dtypeName)
    view.type_ = overrideElementType(view.type_, *dtypeName, argument);
  return view;
}

BufferView BufferView::fromBufferProtocol(py::handle object, Access access,
                                          const char* argument) {
  auto buffer = std::make_unique<Py_buffer>();
  const int flags = PyBUF_STRIDES | PyBUF_FORMAT |
                    (access == Access::Write ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(object.ptr(), buffer.get(), flags) != 0) {
    py::error_already_set refusal;  // takes Python's error, clearing it
    const std::string reason = py::str(refusal.value());
    // Ask again without writing to tell "read-only" from other refusals.
    Py_buffer probe;
    if (access == Access::Write &&
        PyObject_GetBuffer(object.ptr(), &probe, PyBUF_STRIDES) == 0) {
      PyBuffer_Release(&probe);
      invalidArgument(std::string(argument) + " is read-only (a " +
                      typeName(object) + "): results need a writable buffer");
    }
    PyErr_Clear();
    invalidArgument(std::string(argument) + ": the " + typeName(object) +
                    " does not give a strided buffer (" + reason + ")");
  }
  BufferView view;
  view.buffer_ = std::move(buffer);
  Py_buffer& b = *view.buffer_;
  if (!PyBuffer_IsContiguous(&b, 'A'))
    invalidArgument(std::string(argument) +
                    " is not contiguous (a strided view): pass a contiguous "
                    "array, for NumPy numpy.ascontiguousarray");
  view.data_ = b.buf;
  view.bytes_ = static_cast<size_t>(b.len);
  view.type_ = elementTypeFromFormat(b.format, static_cast<size_t>(b.itemsize));
  if (!view.type_.reduceAs) view.type_ = namedByDtype(object, view.type_);
  for (int d = 0; d < b.ndim; ++d) view.shape_.push_back(b.shape[d]);
  return view;
}

BufferView BufferView::fromDlpack(py::handle object, const char* argument) {
  py::object capsule;
  try {
    capsule = object.attr("__dlpack__")();
  } catch (py::error_already_set& e) {
    invalidArgument(std::string(argument) + ": " + typeName(object) +
                    ".__dlpack__() failed: " + std::string(py::str(e.value())));
  }
  auto* managed = static_cast<DLManagedTensor*>(
      PyCapsule_GetPointer(capsule.ptr(), kCapsuleName));
  if (managed == nullptr) {
    PyErr_Clear();
    invalidArgument(std::string(argument) +
                    ": __dlpack__ did not return an unused DLPack capsule");
  }
  const DLTensor& t = managed->dl_tensor;
  if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDAHost)
    invalidArgument(std::string(argument) + " lives on DLPack device type " +
                    std::to_string(t.device.device_type) +
                    ", not in CPU memory: copy it to the CPU first");
  if (!compactRowMajor(t))
    invalidArgument(std::string(argument) +
                    " is not contiguous (a strided view): make it "
                    "contiguous first (torch: .contiguous())");
  BufferView view;
  view.type_ = elementTypeFromDlpack(t.dtype);
  size_t count = 1;
  for (int d = 0; d < t.ndim; ++d) {
    view.shape_.push_back(static_cast<ptrdiff_t>(t.shape[d]));
    count *= static_cast<size_t>(t.shape[d]);
  }
  view.data_ = static_cast<char*>(t.data) + t.byte_offset;
  view.bytes_ = count * view.type_.itemsize;
  // Left named "dltensor": the capsule's destructor hands the tensor back
  // to its producer when the view lets go.
  view.capsule_ = std::move(capsule);
  return view;
}

void registerBufferViews(py::module_& m) {
  struct Description {
    std::string typeName;
    size_t itemsize;
    py::tuple shape;
    size_t nbytes;
  };
  py::class_<Description>(m, "Description")
      .def_readonly("type_name", &Description::typeName)
      .def_readonly("itemsize", &Description::itemsize)
      .def_readonly("shape", &Description::shape)
      .def_readonly("nbytes", &Description::nbytes);
  m.def(
      "describe",
      [](py::handle object, std::optional<std::string> dtype) {
        BufferView view =
            BufferView::acquire(object, BufferView::Access::Read, "x", dtype);
        py::tuple shape(view.shape().size());
        for (size_t d = 0; d < view.shape().size(); ++d)
          shape[d] = py::int_(view.shape()[d]);
        return Description{view.type().name, view.type().itemsize, shape,
                           view.bytes()};
      },
      py::arg("x"), py::arg("dtype") = py::none(),
      "The element type, shape and size mcl sees in x.");
}

}  // namespace mcl::python
