// mcl's result codes as Python exceptions: the classes are the package's
// own (mcl/_errors.py), handed to the module once at import.
#pragma once

#include <mcl/mcl.h>
#include <pybind11/pybind11.h>

#include <string>

namespace mcl::python {

// Carries a result code and its message out of C++ code to the translator,
// which raises the matching mcl.Error subclass.
struct CallError {
  mclResult_t code;
  std::string message;
};

[[noreturn]] void fail(mclResult_t code, std::string message);
// Shorthand for the commonest refusal: a bad argument from Python.
[[noreturn]] void invalidArgument(std::string message);
// Raises the last error of this thread (mclGetLastError) when rc fails.
void check(mclResult_t rc);
// The exception object for (code, message), not raised.
pybind11::object makeError(mclResult_t code, const std::string& message);

void registerErrors(pybind11::module_& m);

}  // namespace mcl::python
