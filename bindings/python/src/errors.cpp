#include "errors.h"

#include <exception>
#include <string>
#include <utility>

namespace py = pybind11;

namespace mcl::python {
namespace {

// Set once by mcl/__init__.py; kept for the life of the process (the
// translator may run during interpreter shutdown, after module teardown).
PyObject* baseClass = nullptr;
PyObject* classesByCode = nullptr;  // dict: int -> class

PyObject* classFor(mclResult_t code) {
  if (classesByCode != nullptr) {
    py::handle cls = PyDict_GetItem(classesByCode, py::int_(int(code)).ptr());
    if (cls) return cls.ptr();
  }
  return baseClass != nullptr ? baseClass : PyExc_RuntimeError;
}

}  // namespace

void fail(mclResult_t code, std::string message) {
  throw CallError{code, std::move(message)};
}

void invalidArgument(std::string message) {
  fail(mclInvalidArgument, std::move(message));
}

void check(mclResult_t rc) {
  if (rc == mclSuccess) return;
  std::string text = mclGetLastError(nullptr);
  if (text.empty()) text = mclGetErrorString(rc);
  fail(rc, std::move(text));
}

py::object makeError(mclResult_t code, const std::string& message) {
  return py::reinterpret_borrow<py::object>(classFor(code))(message, int(code));
}

void registerErrors(py::module_& m) {
  m.def(
      "set_error_classes",
      [](py::object base, py::dict byCode) {
        Py_XDECREF(baseClass);
        Py_XDECREF(classesByCode);
        baseClass = base.release().ptr();
        classesByCode = byCode.release().ptr();
      },
      "Internal: the exception classes of mcl/_errors.py.");
  m.def(
      "invalid_argument",
      [](const std::string& message) {
        return makeError(mclInvalidArgument, message);
      },
      "Internal: an InvalidArgumentError to raise.");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const CallError& e) {
      py::object error = makeError(e.code, e.message);
      PyErr_SetObject(classFor(e.code), error.ptr());
    }
  });
}

}  // namespace mcl::python
