#include "arguments.h"

#include <climits>
#include <cstddef>
#include <string>

#include "errors.h"

namespace py = pybind11;

namespace mcl::python {
namespace {

long long wholeNumber(py::handle value, const char* name) {
  // Anything operator.index takes (NumPy's integers too); bool is an int
  // in Python, but True as a rank is a mistake.
  if (PyBool_Check(value.ptr()) || !PyIndex_Check(value.ptr()))
    invalidArgument(std::string(name) + " must be an int, not " +
                    Py_TYPE(value.ptr())->tp_name);
  py::object index =
      py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0)
    invalidArgument(std::string(name) + " " + std::string(py::str(value)) +
                    " is out of range");
  return v;
}

}  // namespace

int intArgument(py::handle value, const char* name) {
  const long long v = wholeNumber(value, name);
  if (v < INT_MIN || v > INT_MAX)
    invalidArgument(std::string(name) + " " + std::to_string(v) +
                    " is out of range (it must fit a C int)");
  return static_cast<int>(v);
}

int rankArgument(py::handle value, int size, const char* name) {
  const long long v = wholeNumber(value, name);
  if (v < 0 || v >= size)
    invalidArgument(std::string(name) + " " + std::to_string(v) +
                    " is not a rank of this communicator (0.." +
                    std::to_string(size - 1) + ")");
  return static_cast<int>(v);
}

size_t countArgument(py::handle value, const char* name) {
  const long long v = wholeNumber(value, name);
  if (v < 0)
    invalidArgument(std::string(name) + " " + std::to_string(v) +
                    " is negative");
  return static_cast<size_t>(v);
}

std::string textArgument(py::handle value, const char* name) {
  if (!PyUnicode_Check(value.ptr()))
    invalidArgument(std::string(name) + " must be a str, not " +
                    Py_TYPE(value.ptr())->tp_name);
  return value.cast<std::string>();
}

}  // namespace mcl::python
